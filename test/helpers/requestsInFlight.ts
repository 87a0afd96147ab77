/**
 * The most requests of this process's own HTTP client on their way at once, among those a test
 * picks, while `run` runs: seen through Node's HTTP diagnostics channels (node:http fires them
 * for every request).
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { ClientRequest } from "node:http";

type Listener = (message: unknown) => void;

export async function mostInFlightDuring<Result>(
  picks: (path: string) => boolean,
  run: () => Promise<Result>,
): Promise<{ most: number; result: Result }> {
  const inFlight = { now: 0, most: 0 };
  const picked = (message: unknown) => picks((message as { request: ClientRequest }).request.path);
  const started: Listener = (message) => {
    if (!picked(message)) return;
    inFlight.now++;
    inFlight.most = Math.max(inFlight.most, inFlight.now);
  };
  const finished: Listener = (message) => {
    if (picked(message)) inFlight.now--;
  };
  subscribe("http.client.request.start", started);
  subscribe("http.client.response.finish", finished);
  try {
    const result = await run();
    return { most: inFlight.most, result };
  } finally {
    unsubscribe("http.client.request.start", started);
    unsubscribe("http.client.response.finish", finished);
  }
}
