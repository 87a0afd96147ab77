/**
 * The most requests of this process's own HTTP client on their way at once among those a test
 * picks, seen through Node's HTTP diagnostics channels (node:http fires them for every request).
 */
import { subscribe, unsubscribe } from "node:diagnostics_channel";
import type { ClientRequest } from "node:http";

type Listener = (message: unknown) => void;

export function watchRequestsInFlight(picks: (path: string) => boolean) {
  const inFlight = { now: 0, most: 0 };
  const started: Listener = (message) => {
    if (!picks((message as { request: ClientRequest }).request.path)) return;
    inFlight.now++;
    inFlight.most = Math.max(inFlight.most, inFlight.now);
  };
  const finished: Listener = (message) => {
    if (picks((message as { request: ClientRequest }).request.path)) inFlight.now--;
  };
  subscribe("http.client.request.start", started);
  subscribe("http.client.response.finish", finished);
  return {
    get most() {
      return inFlight.most;
    },
    stop() {
      unsubscribe("http.client.request.start", started);
      unsubscribe("http.client.response.finish", finished);
    },
  };
}
