/**
 * The trace of the learned rate in a limiter-matrix run: the sync runs with `--verbose`, which
 * logs each move of the rate controller (`learned rate moved`, `RateLimiter.takeChange`: a cut of
 * the pace, a new edge or cap on requests in flight, a block begun or over) on stderr. The bench
 * keeps those lines and sums them up beside the run's numbers, so why a kind misses its floor can
 * be read from the run itself.
 */
import type { RateChange } from "../lib/http/RateLimiter";

const MOVE = /^debug: learned rate moved (\{.*\})$/;

/** The moves logged on `stderr`, in order. */
export function rateTrace(stderr: string): RateChange[] {
  const moves: RateChange[] = [];
  for (const line of stderr.split("\n")) {
    const json = MOVE.exec(line)?.[1];
    if (json) moves.push(JSON.parse(json) as RateChange);
  }
  return moves;
}

/**
 * A trace in a few words: the last edge learned and when (seconds from the client's start; an
 * edge or a cap dropped later says so), the cap on requests in flight and when it was first
 * learned (raises tried and taken back since do not move it), the pace's cuts, and the time every
 * start was held by blocks. `–` for no move at all.
 */
export function describeTrace(moves: readonly RateChange[]): string {
  if (moves.length === 0) return "–";
  const seconds = (ms: number) => (ms / 1000).toFixed(1);
  const droppedAfter = (index: number, what: string) => {
    const dropped = moves.slice(index + 1).find((m) => m.moved.includes(`${what} dropped`));
    return dropped ? `, dropped at ${seconds(dropped.atMs)} s` : "";
  };
  const parts: string[] = [];
  const edgeAt = moves.findLastIndex((m) => m.moved.includes("edge learned"));
  const edge = moves[edgeAt];
  if (edge?.edge !== undefined) {
    parts.push(`edge ${edge.edge} at ${seconds(edge.atMs)} s${droppedAfter(edgeAt, "edge")}`);
  }
  const capAt = moves.findLastIndex((m) => m.moved.includes("cap learned"));
  const cap = moves[capAt];
  if (cap?.inFlightCap !== undefined) {
    const before = moves.slice(0, capAt).findLastIndex((m) => m.moved.includes("cap dropped"));
    const first = moves.slice(before + 1).find((m) => m.moved.includes("cap learned")) ?? cap;
    parts.push(
      `cap ${cap.inFlightCap} in flight at ${seconds(first.atMs)} s${droppedAfter(capAt, "cap")}`,
    );
  }
  const cuts = moves.filter((m) => m.moved.includes("pace cut")).length;
  if (cuts > 0) parts.push(`${cuts} cut${cuts === 1 ? "" : "s"}`);
  let blocks = 0;
  let heldMs = 0;
  let since: number | undefined;
  for (const move of moves) {
    if (move.moved.includes("blocked")) {
      blocks++;
      since = move.atMs;
    } else if (move.moved.includes("block over") && since !== undefined) {
      heldMs += move.atMs - since;
      since = undefined;
    }
  }
  if (blocks > 0)
    parts.push(`held ${seconds(heldMs)} s in ${blocks} block${blocks === 1 ? "" : "s"}`);
  return parts.join("; ");
}
