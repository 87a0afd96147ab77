/**
 * The cloud's shared rate before lib/rate's model (issue 38): a per-second counter, kept here as
 * the anchor `npm run bench -- --cloud-rate` measures beside the model (bundled into the worker in
 * place of lib/cloud/aws/sharedRate.ts).
 */
import { UpdateCommand } from "@aws-sdk/lib-dynamodb";
import { awsClients } from "../../lib/cloud/aws/clients";
import { isConditionFailure } from "../../lib/cloud/aws/instances";
import {
  RateLimitedError,
  type SharedPermit,
  type SharedRate,
  START_RATE,
  sleepUnlessAborted,
} from "../../lib/http";

/**
 * A request waits this long for a permit at most (into the next window, not many): then its job
 * goes back to the queue with a delay and the worker moves on to its other messages, instead of
 * a paid function sleeping while other tenants' jobs wait for workers.
 */
const MAX_PERMIT_WAIT_MS = 1_000;
/** A 429 cuts the shared limit to this share of it. */
const BETA = 0.95;
const SHARED_RATE = { method: "GET", path: "(the instance's shared request rate)" } as const;
/** A second that was full raises the next one's limit by this share: fast until a 429, then slowly. */
const GROWTH_BEFORE_429 = 1.5;
const GROWTH_AFTER_429 = 1.05;

/** What this process last saw of an instance's shared rate (kept while the function is warm). */
interface Seen {
  second: number;
  /** Permits taken in that second (Infinity: it was full). */
  taken: number;
  limit: number;
  /** A 429 lowered the limit since this process started: probe upward slowly. */
  lowered: boolean;
}
const seen = new Map<string, Seen>();

/**
 * The instance's request rate, shared by every worker of its runs: a one-second window counter in
 * the runs table (`pk = rate#<connectorId>`, `sk = <epoch second>`) that also holds the second's
 * limit (`lim`). A request takes a permit by adding one to the current second's count while it is
 * below that limit (one conditional write per upstream request); when the second is full, it
 * waits for the next, once: a second refusal hands the job back (RateLimitedError). The first request of a second sets its limit: the last one seen, raised when
 * that second was full (x1.5 until a 429, x1.05 after), never above a configured
 * `..._REQUESTS_PER_SECOND`. A 429 writes `BETA` of the current limit onto the next second (one
 * write per 429), which every worker then carries forward. Windows expire by TTL.
 * `requestsPerSecond` 0 (no ceiling) shares nothing.
 */
export function sharedRate(
  table: string,
  connectorId: string,
  requestsPerSecond: number | undefined,
): SharedRate | undefined {
  if (requestsPerSecond === 0) return undefined;
  const ceiling = requestsPerSecond ?? Number.POSITIVE_INFINITY;
  const first = requestsPerSecond ?? START_RATE;
  const pk = `rate#${connectorId}`;

  const proposal = (second: number): number => {
    const last = seen.get(connectorId);
    if (!last) return first;
    const full = last.second === second - 1 && last.taken >= last.limit;
    const grown = full
      ? Math.max(
          last.limit + 1,
          Math.ceil(last.limit * (last.lowered ? GROWTH_AFTER_429 : GROWTH_BEFORE_429)),
        )
      : last.limit;
    return Math.max(1, Math.floor(Math.min(ceiling, grown)));
  };

  const refused = async () => {
    const second = Math.floor(Date.now() / 1000);
    const limit = seen.get(connectorId)?.limit ?? first;
    const lowered = Math.max(1, Math.floor(BETA * limit));
    seen.set(connectorId, { second, taken: 0, limit: lowered, lowered: true });
    await awsClients().dynamo.send(
      new UpdateCommand({
        TableName: table,
        Key: { pk, sk: String(second + 1) },
        UpdateExpression: "SET lim = :lim, expiresAt = :expires",
        ExpressionAttributeValues: { ":lim": lowered, ":expires": second + 121 },
      }),
    );
  };
  const told: SharedPermit = {
    accepted() {},
    refused,
    unanswered() {},
  };

  return {
    async permit(signal) {
      const started = Date.now();
      for (;;) {
        const now = Date.now();
        const second = Math.floor(now / 1000);
        try {
          const { Attributes } = await awsClients().dynamo.send(
            new UpdateCommand({
              TableName: table,
              Key: { pk, sk: String(second) },
              UpdateExpression:
                "ADD n :one SET expiresAt = :expires, lim = if_not_exists(lim, :lim)",
              ConditionExpression: "attribute_not_exists(n) OR n < lim",
              ExpressionAttributeValues: {
                ":one": 1,
                ":lim": proposal(second),
                ":expires": second + 120,
              },
              ReturnValues: "ALL_NEW",
            }),
          );
          remember(
            connectorId,
            second,
            Number(Attributes?.n ?? 1),
            Number(Attributes?.lim ?? first),
          );
          return told;
        } catch (error) {
          if (!isConditionFailure(error)) throw error;
          const last = seen.get(connectorId);
          remember(connectorId, second, Number.POSITIVE_INFINITY, last?.limit ?? first);
          // Many workers share a small rate: hand the job back to the queue rather than wait.
          if (Date.now() - started > MAX_PERMIT_WAIT_MS) {
            throw new RateLimitedError(SHARED_RATE, MAX_PERMIT_WAIT_MS);
          }
          // Spread the waiters over the first part of the next second.
          await sleepUnlessAborted((second + 1) * 1000 - now + Math.random() * 100, signal);
        }
      }
    },
  };
}

function remember(connectorId: string, second: number, taken: number, limit: number): void {
  const last = seen.get(connectorId);
  const lowered = (last?.lowered ?? false) || (last !== undefined && limit < last.limit);
  seen.set(connectorId, { second, taken, limit, lowered });
}
