import { execFileSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { decompress } from "fzstd";
import protobuf from "protobufjs";

/**
 * A c1z reader that shares no code with the writer: fzstd (a zstd decoder of its own, not the
 * writer's wasm zstd), Python's sqlite3 (not sql.js), and protobufjs loading the .proto files of
 * baton-sdk copied under test/export/proto (not the writer's hand-numbered fields).
 */

const PROTO_DIR = join(import.meta.dirname, "proto");

export interface C1zTable {
  /** pragma table_info: name, declared type, not null, default, primary key. */
  columns: [string, string, number, string | null, number][];
  rows: Record<string, unknown>[];
}

export interface C1zContents {
  magic: Buffer;
  tables: Record<string, C1zTable>;
  /** Each index: its table and the columns it covers, and its partial `where` if any. */
  indexes: Record<string, { table: string; unique: boolean; columns: string[]; sql: string }>;
}

/** Reads each table's columns, every row (blobs as hex) and every index, as JSON. */
const PYTHON_READER = `
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
out = {"tables": {}, "indexes": {}}
for (table,) in db.execute("select name from sqlite_master where type = 'table' order by name"):
    cur = db.execute(f"select * from {table} order by id")
    names = [d[0] for d in cur.description]
    rows = [{n: (v.hex() if isinstance(v, bytes) else v) for n, v in zip(names, row)} for row in cur]
    columns = [list(r[1:6]) for r in db.execute(f"pragma table_info({table})")]
    out["tables"][table] = {"columns": columns, "rows": rows}
    for (name, unique) in [(r[1], r[2]) for r in db.execute(f"pragma index_list({table})")]:
        cols = [r[2] for r in db.execute(f"pragma index_info({name})")]
        sql = db.execute("select sql from sqlite_master where name = ?", (name,)).fetchone()[0]
        out["indexes"][name] = {"table": table, "unique": bool(unique), "columns": cols, "sql": sql}
print(json.dumps(out))
`;

let interpreter: string | undefined;

/**
 * The Python interpreter itself: `python3` may be a shim (pyenv's took 3 s a start on a busy
 * machine), so it is started once to learn the real executable.
 */
function python(): string {
  interpreter ??= execFileSync("python3", ["-c", "import sys; print(sys.executable)"], {
    encoding: "utf8",
  }).trim();
  return interpreter;
}

export async function readC1z(path: string, workDir: string): Promise<C1zContents> {
  const file = await readFile(path);
  const database = decompress(file.subarray(5));
  const dbPath = join(workDir, "read-back.db");
  await writeFile(dbPath, database);
  const json = execFileSync(python(), ["-c", PYTHON_READER, dbPath], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  return { magic: file.subarray(0, 5), ...JSON.parse(json) };
}

/** The c1.connector.v2 messages, from baton-sdk's .proto files. */
export async function batonMessages() {
  const root = new protobuf.Root();
  // google/protobuf/* are protobufjs' own copies of the well-known types.
  root.resolvePath = (_origin, target) =>
    target.startsWith("google/protobuf/") ? target : join(PROTO_DIR, target);
  await root.load(
    [
      "c1/connector/v2/resource.proto",
      "c1/connector/v2/entitlement.proto",
      "c1/connector/v2/grant.proto",
      "c1/connector/v2/annotation_trait.proto",
    ],
    { keepCase: true },
  );
  root.resolveAll();
  const type = (name: string) => root.lookupType(`c1.connector.v2.${name}`);
  const decode = (name: string, hex: string) =>
    type(name).toObject(type(name).decode(Buffer.from(hex, "hex")), {
      enums: String,
      defaults: false,
      bytes: String,
    });
  return { type, decode };
}
