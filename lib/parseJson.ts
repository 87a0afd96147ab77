/**
 * The value JSON text holds, or undefined when there is no text or it is not JSON: for input a zod
 * schema judges next, which then refuses text that is not JSON as it refuses a missing value.
 */
export function parseJsonOrUndefined(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
