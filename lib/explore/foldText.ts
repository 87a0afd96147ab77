/**
 * The one form both a search's text and the words typed into it are compared in: compatibility
 * decomposition (ligatures apart: `ﬁ` is `fi`, `Ⅻ` is `xii`), full case folding (`ß` and `ẞ` are
 * `ss`, `İ` is `i`, final `ς` is `σ`), no combining marks (`ë` is `e`), a few letters that carry
 * their accent inside (`ø`, `ł`, `đ`) as their base letter, and control characters as spaces
 * (so the separators a search text puts between entries never occur in folded text).
 *
 * Folding changes a text's length (`ß` is one unit, `ss` two; `İ` lower-cases to two units and
 * loses one of them again), so offsets into folded text are only ever computed on folded text.
 */
export function fold(text: string): string {
  // Printable ASCII (most names, logins and emails) folds by lower case alone.
  if (PRINTABLE_ASCII.test(text)) return text.toLowerCase();
  // Lower, upper, lower: the upper step spells out what only has a capital's expansion (ß -> SS);
  // the first lower brings ẞ to ß so it takes that step too.
  const cased = text.normalize("NFKD").toLowerCase().toUpperCase().toLowerCase();
  return cased
    .normalize("NFKD")
    .replace(MARKS, "")
    .replace(CONTROLS, " ")
    .replace(INNER_ACCENTS, (letter) => BASE_OF[letter] as string);
}

/** The words of a search, folded: a text matches when it holds every one. */
export const searchWords = (q: string): string[] =>
  [...new Set(fold(q).split(/\s+/))].filter(Boolean);

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const MARKS = /\p{M}/gu;
const CONTROLS = /\p{Cc}/gu;
const BASE_OF: Record<string, string> = {
  ς: "σ",
  ø: "o",
  ł: "l",
  đ: "d",
  ħ: "h",
  ŧ: "t",
  æ: "ae",
  œ: "oe",
};
const INNER_ACCENTS = new RegExp(`[${Object.keys(BASE_OF).join("")}]`, "gu");
