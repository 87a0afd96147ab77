import type { Readable } from "node:stream";
import { StringDecoder } from "node:string_decoder";

/**
 * The lines of a JSON Lines stream as raw text, a chunk's lines at a time (no promise a line),
 * blank lines skipped. Lines end where `node:readline` ends them (`\n`, `\r\n` and a lone `\r`,
 * a `\r` at a chunk's end held until the next chunk tells which), and the bytes are decoded as it
 * decodes them (UTF-8, a character split between chunks joined, bad bytes as U+FFFD).
 */
export async function* lineBatches(input: Readable): AsyncGenerator<string[]> {
  const decoder = new StringDecoder("utf8");
  let rest = "";
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    const text = rest + (typeof chunk === "string" ? chunk : decoder.write(chunk));
    // The last line is whole only at its ending; a `\r` last may be the half of a `\r\n`.
    let end = text.lastIndexOf("\n");
    const cr = text.lastIndexOf("\r");
    if (cr > end && cr < text.length - 1) end = cr;
    rest = text.slice(end + 1);
    if (end >= 0) yield splitLines(text, end);
  }
  // As node:readline does, the bytes of a character cut short at the very end are dropped.
  if (rest.length > 0) yield splitLines(rest, rest.length);
}

/** The non-empty lines of `text` up to `end` (a line ending, or the text's end). */
function splitLines(text: string, end: number): string[] {
  const lines: string[] = [];
  const whole = text.slice(0, end);
  if (whole.includes("\r")) {
    for (const line of whole.split(LINE_ENDING)) if (line.length > 0) lines.push(line);
    return lines;
  }
  let from = 0;
  while (from < end) {
    let at = text.indexOf("\n", from);
    if (at === -1 || at > end) at = end;
    if (at > from) lines.push(text.slice(from, at));
    from = at + 1;
  }
  return lines;
}

const LINE_ENDING = /\r\n|\n|\r/;
