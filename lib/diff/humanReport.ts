import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { describeVerdict, type GuardVerdict } from "../guard";
import { endStream, writeChunk } from "../snapshot/jsonLines";
import type { RunFiles } from "../sortedRuns/RunFiles";
import { type Change, type ChangeSink, type DiffResult, isToggle } from "./compareSnapshots";
import type { FieldChanges, KeyedRecord } from "./keyedRecord";
import type { ChunkedOutput } from "./output";

/** The groups of the human report, in the order it prints them. */
const SECTIONS = {
  accountsAdded: "Accounts added",
  accountsRemoved: "Accounts removed",
  accountsDisabled: "Accounts disabled",
  accountsEnabled: "Accounts enabled",
  accountsChanged: "Accounts changed (display name, login, emails)",
  resources: "Other resources (teams, roles, member types) added, removed or changed",
  entitlements: "Entitlements added and removed",
  grants: "Grants added and removed, by entitlement",
} as const;
type Section = keyof typeof SECTIONS;

const SIGN = { added: "+", removed: "-", changed: "~" } as const;

/**
 * The human report: a short summary, then the changes grouped. Changes arrive in key order, while
 * the groups print one after another and the summary (whose counts are known only at the end)
 * first; so each group is written to a temporary file as it comes and the files are printed at the
 * end, one after another: memory holds no group, however large.
 */
export class HumanReport {
  readonly #files: RunFiles;
  readonly #sections = new Map<Section, { path: string; stream: WriteStream; lines: number }>();
  #entitlement: string | undefined;

  constructor(files: RunFiles) {
    this.#files = files;
  }

  readonly sink: ChangeSink = (change: Change) => {
    if (change.change === "changed") return this.#changed(change.after, change.fields);
    const { record } = change;
    const sign = SIGN[change.change];
    if (record.kind === "grant") return this.#grant(record, sign);
    if (record.kind === "entitlement")
      return this.#write("entitlements", `  ${sign} ${record.id}${text(record.label)}\n`);
    if (!record.account) return this.#write("resources", `  ${sign} ${describe(record)}\n`);
    const section = change.change === "added" ? "accountsAdded" : "accountsRemoved";
    return this.#write(section, `  ${sign} ${describe(record)}\n`);
  };

  async #changed(record: KeyedRecord, fields: FieldChanges): Promise<void> {
    if (!record.account) {
      await this.#write("resources", `  ~ ${record.id}  ${fieldText(fields)}\n`);
      return;
    }
    const { status, ...others } = fields;
    const toggled = status !== undefined && isToggle(status);
    if (toggled) {
      const section = status.after === "disabled" ? "accountsDisabled" : "accountsEnabled";
      await this.#write(section, `  ${describe(record)}\n`);
    }
    const rest: FieldChanges = toggled ? others : fields;
    if (Object.keys(rest).length > 0)
      await this.#write("accountsChanged", `  ~ ${record.id}  ${fieldText(rest)}\n`);
  }

  async #grant(record: KeyedRecord, sign: string): Promise<void> {
    const entitlement = record.label ?? "";
    if (entitlement !== this.#entitlement) {
      this.#entitlement = entitlement;
      await this.#write("grants", `  ${entitlement}\n`, false);
    }
    const principal = record.id.startsWith(`${entitlement}:`)
      ? record.id.slice(entitlement.length + 1)
      : record.id;
    await this.#write("grants", `    ${sign} ${principal}\n`);
  }

  async #write(section: Section, line: string, counted = true): Promise<void> {
    let open = this.#sections.get(section);
    if (!open) {
      const path = this.#files.path(`report-${section}`);
      const stream = createWriteStream(path);
      // Heard between writes (a small line does not wait): the next write or the end throws it.
      stream.on("error", () => {});
      open = { path, stream, lines: 0 };
      this.#sections.set(section, open);
    }
    if (counted) open.lines++;
    const { path, stream } = open;
    await writeChunk(stream, line).catch((error: unknown) => {
      throw this.#files.writeFailure(error, path, stream);
    });
  }

  /** Closes the groups' files without printing them (the diff failed). */
  close(): void {
    for (const open of this.#sections.values()) open.stream.destroy();
  }

  /** Prints the summary, then each group from its file. */
  async print(
    out: ChunkedOutput,
    result: DiffResult,
    verdict: GuardVerdict,
    paths: { old: string; new: string },
  ): Promise<void> {
    for (const { path, stream } of this.#sections.values()) {
      await endStream(stream).catch((error: unknown) => {
        throw this.#files.writeFailure(error, path, stream);
      });
    }
    await out.write(summary(result, verdict, paths));
    for (const section of Object.keys(SECTIONS) as Section[]) {
      const open = this.#sections.get(section);
      if (!open) continue;
      await out.write(`\n${SECTIONS[section]} (${grouped(open.lines)})\n`);
      for await (const chunk of createReadStream(open.path, { encoding: "utf8" })) {
        await out.write(chunk as string);
      }
    }
  }
}

const grouped = (n: number) => n.toLocaleString("en-US");
const text = (value: string | undefined) => (value ? `  ${value}` : "");

/** `user:1042  Ada Lovelace (ada@example.com) [disabled]` */
function describe(record: KeyedRecord): string {
  const fields = record.fields ?? {};
  const login = fields.login ? ` (${fields.login})` : "";
  const disabled = fields.status === "disabled" ? " [disabled]" : "";
  return `${record.id}${text(fields.displayName)}${login}${disabled}`;
}

/** `displayName "A" -> "B"; emails ["a@x"] -> ["b@x"]` */
function fieldText(fields: FieldChanges): string {
  return Object.entries(fields)
    .map(([field, c]) => `${field} ${JSON.stringify(c.before)} -> ${JSON.stringify(c.after)}`)
    .join("; ");
}

function summary(
  result: DiffResult,
  verdict: GuardVerdict,
  paths: { old: string; new: string },
): string {
  const { counts, removal, next, others } = result;
  const a = counts.accounts;
  const side = (label: string, path: string, s: DiffResult["old"]) =>
    `  ${label}  ${path}: sync ${s.start.syncId}${s.start.startedAt ? ` of ${s.start.startedAt}` : ""}\n`;
  const guard =
    verdict.basis === "no_users"
      ? describeVerdict(verdict)
      : `${describeVerdict(verdict)}: a sync would ${verdict.held ? "hold this snapshot (exit 4)" : "publish it"}`;
  return [
    `${result.old.start.connector}: ${result.equal ? "no differences" : "the snapshots differ"}\n`,
    side("old", paths.old, result.old),
    side("new", paths.new, result.new),
    `accounts      ${grouped(removal.users.previous)} -> ${grouped(next.users)}: ${grouped(a.added)} added, ${grouped(a.removed)} removed, ${grouped(a.disabled)} disabled, ${grouped(a.enabled)} enabled, ${grouped(a.changed)} changed\n`,
    `resources     ${grouped(others.added)} added, ${grouped(others.removed)} removed, ${grouped(others.changed)} changed (not accounts)\n`,
    `entitlements  ${grouped(counts.entitlement.added)} added, ${grouped(counts.entitlement.removed)} removed\n`,
    `grants        ${grouped(removal.grants.previous)} -> ${grouped(next.grants)}: ${grouped(counts.grant.added)} added, ${grouped(counts.grant.removed)} removed\n`,
    `guard         ${guard}\n`,
  ].join("");
}
