import { z } from "zod";

/**
 * An upstream object's id, as text, checked at the boundary: it becomes a path segment of later
 * requests (`/v1/teams/{id}/users`) and part of record ids, so `.` and `..` (which a URL resolves
 * into another endpoint's path), control characters and numbers beyond the safe integer range
 * (which JSON parsing has already rounded, so two users could collapse into one) and lone surrogates
 * (which no URL can carry) are refused with
 * the reason. A string id keeps its exact text.
 */
export const upstreamId = z
  .union([
    z.string().min(1),
    z.number().int().refine(Number.isSafeInteger, {
      message:
        "a numeric id beyond the safe integer range (2^53) cannot be read exactly; the upstream must send such ids as strings",
    }),
  ])
  .transform(String)
  .refine((id) => id !== "." && id !== "..", {
    message: "an id of . or .. is not a usable path segment",
  })
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
  .refine((id) => !/[\u0000-\u001f\u007f]/.test(id), {
    message: "an id with control characters is not a usable path segment",
  })
  // A lone surrogate (JSON can carry one as \ud800) cannot be encoded into a URL at all.
  .refine((id) => !/\p{Cs}/u.test(id), {
    message:
      "an id that is not well-formed Unicode (a lone surrogate) is not a usable path segment",
  });
