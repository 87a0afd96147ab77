import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { HttpCounters } from "../http";
import type { SyncEntry } from "./syncHistory";

const PREFIX = "access_connectors_";

/** Sync durations: a small test tenant takes a second, a large one tens of minutes. */
const DURATION_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1_200, 1_800, 3_600, 7_200];

/** What a scrape is told besides the counters: readiness, asked when scraped. */
export interface MetricsSources {
  ready(): boolean;
}

/**
 * The service's Prometheus metrics (`GET /metrics`), in a registry of its own (never prom-client's
 * global one), with the process's default metrics. Every series carries the connector kind and
 * CONNECTOR_HOST_ID; no label carries a secret, an account or a user id: the other labels are
 * closed sets (outcomes, record kinds, task types, action names, error codes).
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly #syncs: Counter<"outcome" | "trigger">;
  readonly #duration: Histogram<"outcome">;
  readonly #lastSuccess: Gauge;
  readonly #lastUpload: Gauge;
  readonly #records: Gauge<"kind">;
  readonly #requests: Counter<"status">;
  readonly #learnedRate: Gauge;
  readonly #retries: Counter;
  readonly #rateLimited: Counter;
  readonly #waited: Counter;
  readonly #uploads: Counter;
  readonly #uploadBytes: Counter;
  readonly #tasks: Counter<"type" | "outcome">;
  readonly #actions: Counter<"action" | "outcome">;
  readonly #holds: Counter;

  constructor(
    labels: { connector: string; hostId: string; version: string },
    sources: MetricsSources,
  ) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ connector: labels.connector, host_id: labels.hostId });
    const counter = <L extends string>(name: string, help: string, labelNames: L[] = []) =>
      new Counter<L>({ name: PREFIX + name, help, labelNames, registers });
    const gauge = <L extends string>(name: string, help: string, labelNames: L[] = []) =>
      new Gauge<L>({ name: PREFIX + name, help, labelNames, registers });

    new Gauge({
      name: `${PREFIX}info`,
      help: "The service's version (always 1).",
      labelNames: ["version"],
      registers,
    }).set({ version: labels.version }, 1);
    new Gauge({
      name: `${PREFIX}ready`,
      help: "1 when /readyz answers 200, else 0.",
      registers,
      collect() {
        this.set(sources.ready() ? 1 : 0);
      },
    });
    this.#syncs = counter(
      "syncs_total",
      "Syncs ended, by outcome (uploaded, error, held, abandoned) and trigger (schedule, task).",
      ["outcome", "trigger"],
    );
    this.#duration = new Histogram({
      name: `${PREFIX}sync_duration_seconds`,
      help: "How long syncs took, from the label syncing to their end, by outcome.",
      labelNames: ["outcome"],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#lastSuccess = gauge(
      "last_successful_sync_timestamp_seconds",
      "When the last sync that uploaded its snapshot ended (Unix time); absent before the first.",
    );
    this.#lastUpload = gauge(
      "last_upload_timestamp_seconds",
      "When the platform last took a snapshot (a sync's or a released one; Unix time).",
    );
    this.#records = gauge(
      "snapshot_records",
      "Records in the last complete snapshot (uploaded or held), by kind.",
      ["kind"],
    );
    this.#requests = counter(
      "upstream_requests_total",
      "Requests sent to the upstream by syncs, every attempt and token call counted, by how each ended: the answer's status (200, 429, ...) or none (timeout, network_error, aborted, too_large; in_flight when its sync ended first).",
      ["status"],
    );
    this.#learnedRate = gauge(
      "upstream_learned_rate",
      "The rate (requests per second) the client learned the upstream sustains, as of the last sync's end; 0 when none was learned (no 429 nor RateLimit-Limit yet; a configured rate is a ceiling, not learned).",
    );
    this.#retries = counter(
      "upstream_retries_total",
      "Upstream requests that repeated an earlier one.",
    );
    this.#rateLimited = counter(
      "upstream_rate_limited_total",
      "Times the upstream answered 429 and a sync waited before trying again.",
    );
    this.#waited = counter(
      "upstream_rate_limit_wait_seconds_total",
      "Time syncs spent waiting because the upstream answered 429.",
    );
    this.#uploads = counter("uploads_total", "Snapshots the platform took.");
    this.#uploadBytes = counter(
      "upload_bytes_total",
      "Bytes of the snapshots the platform took (gzip).",
    );
    this.#tasks = counter(
      "tasks_total",
      "Platform tasks finished, by type (sync, action) and outcome (succeeded, failed).",
      ["type", "outcome"],
    );
    this.#actions = counter(
      "actions_total",
      "Actions carried out for tasks, by action and outcome (succeeded, or the error code).",
      ["action", "outcome"],
    );
    this.#holds = counter(
      "removal_guard_holds_total",
      "Complete snapshots the removal guard held instead of uploading.",
    );
    // Present from the start, so a rate over them is defined before the first event.
    for (const outcome of ["uploaded", "error", "held", "abandoned"]) {
      for (const trigger of ["schedule", "task"]) this.#syncs.inc({ outcome, trigger }, 0);
    }
  }

  /** Adds prom-client's process metrics (CPU, memory, event-loop lag, GC): once something scrapes. */
  collectProcessMetrics(): void {
    collectDefaultMetrics({ register: this.registry });
  }

  syncEnded(
    entry: SyncEntry,
    counters:
      | Pick<
          HttpCounters,
          "requests" | "statuses" | "retries" | "rateLimitWaits" | "rateLimitWaitMs" | "learnedRate"
        >
      | undefined,
  ): void {
    this.#syncs.inc({ outcome: entry.outcome, trigger: entry.trigger });
    this.#duration.observe({ outcome: entry.outcome }, entry.durationMs / 1000);
    if (entry.outcome === "uploaded") this.#lastSuccess.set(Date.parse(entry.endedAt) / 1000);
    if (entry.outcome === "held") this.#holds.inc();
    if (entry.counts) {
      this.#records.reset();
      for (const [kind, count] of Object.entries(entry.counts)) this.#records.set({ kind }, count);
    }
    if (counters) {
      let ended = 0;
      for (const [status, count] of Object.entries(counters.statuses)) {
        this.#requests.inc({ status }, count);
        ended += count;
      }
      // Requests an error or a stop left in flight when their sync ended.
      if (counters.requests > ended) {
        this.#requests.inc({ status: "in_flight" }, counters.requests - ended);
      }
      this.#learnedRate.set(counters.learnedRate);
      this.#retries.inc(counters.retries);
      this.#rateLimited.inc(counters.rateLimitWaits);
      this.#waited.inc(counters.rateLimitWaitMs / 1000);
    }
  }

  uploaded(bytes: number, at = Date.now()): void {
    this.#uploads.inc();
    this.#uploadBytes.inc(bytes);
    this.#lastUpload.set(at / 1000);
  }

  taskEnded(type: "sync" | "action", succeeded: boolean): void {
    this.#tasks.inc({ type, outcome: succeeded ? "succeeded" : "failed" });
  }

  actionEnded(action: string, outcome: string): void {
    this.#actions.inc({ action, outcome });
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
