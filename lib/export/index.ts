export { type C1zSummary, writeC1z } from "./c1z/writeC1z";
export { type CsvSummary, GRANT_COLUMNS, writeGrantsCsv } from "./csv/writeGrantsCsv";
export { ExportFile } from "./ExportFile";
