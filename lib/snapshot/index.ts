export { endStream, jsonLine, readLines, writeChunk, writeJsonLine } from "./jsonLines";
export { lineBatches } from "./lineBatches";
export * from "./records";
export {
  type AssembledSnapshot,
  type AssemblerOptions,
  SnapshotAssembler,
} from "./SnapshotAssembler";
export { SnapshotFile } from "./SnapshotFile";
export { removeTempFilesOnExit, tempFiles } from "./tempFiles";
