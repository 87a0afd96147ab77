import type { TokenSettings } from "../tokens";

/** The calls of the protocol (docs/platform-protocol.md), as the simulator names them. */
export const PLATFORM_ROUTES = [
  "token",
  "hello",
  "nextTask",
  "heartbeat",
  "finish",
  "snapshot",
  "status",
] as const;
export type PlatformRoute = (typeof PLATFORM_ROUTES)[number];

/**
 * An injected fault. `status500` and `status429` answer after reading the body and change
 * nothing; `drop` closes the connection as soon as the request arrives; `slow` waits `delayMs`,
 * then carries the call out and answers only if the client is still there.
 */
export type PlatformFaultKind = "status500" | "status429" | "drop" | "slow";

export interface PlatformFaultOptions {
  /** For `slow`; default 1000. */
  delayMs?: number;
  /** For `status429`: the `Retry-After` header in seconds; none when unset. */
  retryAfterSeconds?: number;
}

export interface PlatformSimulatorOptions extends TokenSettings {
  clientId?: string;
  clientSecret?: string;
  /** Answered to `hello`; default 5. */
  pollIntervalSeconds?: number;
  /** The next this many snapshot PUTs are answered 500 (after their body is read). */
  failUploads?: number;
  /**
   * False: an upload keeps its checksum and size, not its text (the benchmark's snapshot of
   * 1,000,000 users is longer than a string can be). Default true.
   */
  keepText?: boolean;
}

export interface SimUpload {
  syncId: string;
  /** PUTs that reached the upload handler (faulted ones included, dropped ones too). */
  received: number;
  /** PUTs stored: checksum verified and body gunzipped. */
  accepted: number;
  /** PUTs answered 400: checksum missing or wrong, or not gzip. */
  rejected: number;
  /** The decompressed snapshot of the last accepted PUT (unless `keepText` is false). */
  text: string | undefined;
  /** Hex SHA-256 and size of the last accepted body, as received. */
  sha256: string | undefined;
  bytes: number;
  /** The last accepted PUT's `content-length` header, and how many chunks its body came in. */
  contentLength: string | undefined;
  chunks: number;
}

export interface SimLabel {
  label: string;
  detail: string | undefined;
  at: string;
}

export interface SimHello {
  hostId: string;
  connector: string;
  version: string;
  capabilities: unknown;
  at: string;
}

export type SimTaskInput =
  | { id?: string; type: "sync" }
  | { id?: string; type: "action"; request: unknown };
export type SimTask =
  | { id: string; type: "sync" }
  | { id: string; type: "action"; request: unknown };

export interface SimFinishedTask {
  id: string;
  status: "succeeded" | "failed";
  result: unknown;
  error: unknown;
  at: string;
}

export interface SimRequestRecord {
  route: PlatformRoute | "unknown";
  method: string;
  path: string;
  /** The status answered, or `dropped`. */
  outcome: number | "dropped";
}

export interface PlatformSimulator {
  /** `http://127.0.0.1:<port>` */
  url: string;
  credentials: { clientId: string; clientSecret: string };
  /** The CONNECTOR_* platform variables that point a connector at this simulator. */
  env(hostId?: string): Record<string, string>;

  /** Queues a task (FIFO); each is handed out once. Returns its id (`task-<n>` when not given). */
  enqueueTask(task: SimTaskInput): string;
  /** The next `count` requests to `route` get `kind` (queued after faults already pending). */
  failNext(
    route: PlatformRoute,
    count: number,
    kind: PlatformFaultKind,
    options?: PlatformFaultOptions,
  ): void;
  /** The tokens issued so far, for tests that check none leaks. */
  issuedTokens(): string[];
  /** Every token issued so far stops working (401), as if the platform had rotated its keys. */
  revokeTokens(): void;

  /** Snapshot uploads by syncId. */
  readonly uploads: ReadonlyMap<string, SimUpload>;
  /** Every label set, in order. */
  readonly labels: readonly SimLabel[];
  readonly hellos: readonly SimHello[];
  /** Tasks handed out, in order. */
  readonly handedOut: readonly SimTask[];
  /** Tasks queued and not handed out yet. */
  readonly pendingTasks: readonly SimTask[];
  /** The first finish of each task (a repeated finish is acknowledged and not recorded again). */
  readonly finishedTasks: readonly SimFinishedTask[];
  /** Heartbeats received per task id. */
  readonly heartbeats: ReadonlyMap<string, number>;
  /** Token requests that reached the handler, and how many of them got a token. */
  readonly tokenRequests: number;
  readonly tokensIssued: number;
  /** Every request received, in order, with how it was answered. */
  readonly requests: readonly SimRequestRecord[];
  /** Requests received on one route. */
  count(route: PlatformRoute): number;
  close(): Promise<void>;
}
