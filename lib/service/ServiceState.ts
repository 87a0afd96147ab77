import { readFile, rename } from "node:fs/promises";
import * as z from "zod";
import type { ActionReply, ReplyStore } from "../actions";
import type { Logger } from "../logging";
import type { StatusLabel, TaskOutcome } from "../platform";
import { writeFailure } from "../sync/errors";
import { MAX_REMEMBERED_REPLIES, REPLY_RETENTION_MS } from "./constants";
import { STATE_DIR_ELSEWHERE, writeWhole } from "./writeWhole";

/** A label as last reported to the platform, or waiting to be. */
export interface LabelReport {
  label: StatusLabel;
  detail?: string;
  delivered: boolean;
}

export interface RememberedReply {
  /** Of the request as parsed: the same `requestId` with another request is refused. */
  fingerprint: string;
  reply: ActionReply;
}

/** A task's finish the platform has not acknowledged yet. */
export interface PendingFinish {
  taskId: string;
  outcome: TaskOutcome;
}

const stateFile = z.object({
  version: z.literal(1),
  replies: z.record(
    z.string(),
    z.object({ at: z.string(), fingerprint: z.string(), reply: z.looseObject({}) }),
  ),
  label: z
    .object({
      label: z.enum(["syncing", "connected", "error"]),
      detail: z.string().optional(),
      delivered: z.boolean(),
    })
    .optional(),
  finishes: z.array(
    z.object({
      taskId: z.string().min(1),
      outcome: z.object({
        status: z.enum(["succeeded", "failed"]),
        result: z.unknown().optional(),
        error: z.unknown().optional(),
      }),
    }),
  ),
});
type StateFile = z.output<typeof stateFile>;

const empty = (): StateFile => ({ version: 1, replies: {}, finishes: [] });

/**
 * What the service remembers across restarts, in one small JSON file written whole (to a
 * temporary name, then renamed, so a crash never leaves half a file): action replies by
 * `requestId` (a task delivered again gets the first reply and nothing runs twice), the last
 * label, and the task finishes the platform has not acknowledged. Holds no secret: replies are
 * redacted when they are made. A save the system refuses (a full disk) fails with
 * `WriteFailedError` naming the file; the state in memory stands and the next change saves it all.
 */
export class ServiceState implements ReplyStore {
  readonly path: string;
  #state: StateFile;
  #saving: Promise<void> = Promise.resolve();

  private constructor(path: string, state: StateFile) {
    this.path = path;
    this.#state = state;
  }

  /** Reads the file; a missing one starts empty, a broken one is set aside and starts empty. */
  static async open(path: string, logger: Logger): Promise<ServiceState> {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT")
        return new ServiceState(path, empty());
      throw error;
    }
    let parsed: StateFile | undefined;
    try {
      const result = stateFile.safeParse(JSON.parse(text));
      if (result.success) parsed = result.data;
    } catch {
      parsed = undefined;
    }
    if (parsed) return new ServiceState(path, parsed);
    const aside = `${path}.unreadable-${Date.now()}`;
    await rename(path, aside).catch((error: unknown) => {
      throw writeFailure(error, {
        what: "the unreadable state file",
        path,
        elsewhere: STATE_DIR_ELSEWHERE,
        outcome: `it could not be set aside (to ${aside}) and the service did not start`,
      });
    });
    logger.warn(
      "the state file could not be read; it was set aside and the service starts afresh",
      {
        stateFile: path,
        setAside: aside,
      },
    );
    return new ServiceState(path, empty());
  }

  /** The reply remembered for `requestId`, with the fingerprint of the request it answered. */
  reply(requestId: string): RememberedReply | undefined {
    const entry = this.#state.replies[requestId];
    return entry && { fingerprint: entry.fingerprint, reply: entry.reply as ActionReply };
  }

  get repliesRemembered(): number {
    return Object.keys(this.#state.replies).length;
  }

  /** Remembers a reply, forgetting those past the retention and the oldest beyond the limit. */
  async remember(fingerprint: string, reply: ActionReply, now = Date.now()): Promise<void> {
    const kept = Object.entries(this.#state.replies)
      .filter(([, entry]) => now - Date.parse(entry.at) < REPLY_RETENTION_MS)
      .sort(([, a], [, b]) => a.at.localeCompare(b.at))
      .slice(-(MAX_REMEMBERED_REPLIES - 1));
    kept.push([reply.requestId, { at: new Date(now).toISOString(), fingerprint, reply }]);
    this.#state.replies = Object.fromEntries(kept);
    await this.#save();
  }

  get label(): LabelReport | undefined {
    return this.#state.label;
  }

  async setLabel(label: LabelReport): Promise<void> {
    this.#state.label = label;
    await this.#save();
  }

  get finishes(): readonly PendingFinish[] {
    return this.#state.finishes;
  }

  async queueFinish(finish: PendingFinish): Promise<void> {
    this.#state.finishes = [
      ...this.#state.finishes.filter((f) => f.taskId !== finish.taskId),
      finish,
    ];
    await this.#save();
  }

  async dropFinish(taskId: string): Promise<void> {
    this.#state.finishes = this.#state.finishes.filter((f) => f.taskId !== taskId);
    await this.#save();
  }

  /** Writes are serialized; each writes the state as it is when its turn comes. */
  #save(): Promise<void> {
    const file = {
      what: "the service's state file",
      path: this.path,
      elsewhere: STATE_DIR_ELSEWHERE,
      outcome:
        "the action replies, label and task finishes it keeps were not saved; the service keeps them in memory and saves them whole at the next change",
    };
    const write = () => writeWhole(file, `${JSON.stringify(this.#state)}\n`);
    this.#saving = this.#saving.then(write, write);
    return this.#saving;
  }
}
