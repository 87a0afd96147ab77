import { stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { type Command, Option } from "commander";
import { UsageError } from "../../errors";
import { removeTempFilesOnExit } from "../../snapshot";
import type { CliIo } from "../io";

const FORMATS = ["c1z", "csv"] as const;
type ExportFormat = (typeof FORMATS)[number];

/**
 * `export SNAPSHOT --format c1z|csv OUT` (docs/review-tools.md): the snapshot as baton's
 * c1z v1 file, or one CSV row per grant. OUT is replaced only once it is written whole.
 */
export function addExportCommand(program: Command, io: CliIo): void {
  program
    .command("export")
    .description("write a complete snapshot as baton's c1z file or as a CSV sheet of its grants")
    .argument("<snapshot>", "a complete snapshot (.jsonl or .jsonl.gz)")
    .argument("<out>", "the file to write (replaced only once written whole)")
    .addOption(
      new Option("--format <format>", "c1z: baton's file; csv: one row per grant")
        .choices(FORMATS)
        .makeOptionMandatory(),
    )
    .action(async (snapshot: string, out: string, options: { format: ExportFormat }) => {
      await exportSnapshot(io, snapshot, resolve(out), options.format);
    });
}

async function exportSnapshot(
  io: CliIo,
  snapshot: string,
  out: string,
  format: ExportFormat,
): Promise<void> {
  if (resolve(snapshot) === out)
    throw new UsageError(`OUT: ${out} is the snapshot itself; give another file to write`);
  await checkOut(out, snapshot, format);
  // OUT's temporary file, the temporary database beside it and the duplicate check's runs.
  removeTempFilesOnExit();
  // Loaded on use: the c1z writer's SQLite, zstd and protobuf cost every other command 0.15 s.
  const { writeC1z, writeGrantsCsv } = await import("../../export");
  if (format === "c1z") {
    const { counts, databaseBytes, fileBytes } = await writeC1z(snapshot, out);
    io.stdout.write(
      `exported ${counts.resource_type} resource types, ${counts.resource} resources, ${counts.entitlement} entitlements and ${counts.grant} grants to ${out} (c1z: ${mib(fileBytes)} MiB, its database ${mib(databaseBytes)} MiB)\n`,
    );
  } else {
    const { rows } = await writeGrantsCsv(snapshot, out);
    io.stdout.write(`exported ${rows} grants to ${out} (csv: a header and one row per grant)\n`);
  }
}

/**
 * OUT must name a file in a directory that exists: a directory or a missing parent is a usage
 * error naming OUT and the fix (exit 2), found before the snapshot is read, not a write failure
 * with advice about the device at the end.
 */
async function checkOut(out: string, snapshot: string, format: ExportFormat): Promise<void> {
  const kind = async (path: string) =>
    stat(path).then(
      (s) => (s.isDirectory() ? "directory" : "other"),
      () => "missing",
    );
  if ((await kind(out)) === "directory") {
    const example = join(out, `${basename(snapshot).replace(/\.jsonl(\.gz)?$/, "")}.${format}`);
    throw new UsageError(
      `OUT: ${out} is a directory; give the file to write in it, e.g. ${example}`,
    );
  }
  const parent = dirname(out);
  const where = await kind(parent);
  if (where !== "directory")
    throw new UsageError(
      `OUT: ${out} cannot be written: ${parent} ${where === "missing" ? "does not exist" : "is not a directory"}; create the directory first or give a file in one that exists`,
    );
}

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
