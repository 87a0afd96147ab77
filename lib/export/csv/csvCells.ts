/**
 * One CSV row (RFC 4180): a field that holds a comma, a double quote, a CR or an LF is quoted, its
 * quotes doubled; the row ends in CRLF. A cell that a spreadsheet would read as a formula (it
 * starts with `=`, `+`, `-` or `@`, or a tab or CR that some spreadsheets skip before one) is
 * prefixed with `'`, so opening the sheet never runs what an upstream name holds (OWASP's CSV
 * injection advice). The prefix shows in the cell: `-Ops` reads `'-Ops`.
 */
export function csvRow(cells: readonly string[]): string {
  return `${cells.map(csvCell).join(",")}\r\n`;
}

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvCell(value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}
