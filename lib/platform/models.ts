/** The platform's answers (docs/platform-protocol.md), parsed at the boundary. */
import * as z from "zod";

/** OAuth client-credentials answer; `expires_in` is optional in RFC 6749 (one hour assumed). */
export const tokenAnswer = z.object({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
  expires_in: z.number().positive().optional(),
});

export const helloAnswer = z.object({
  pollIntervalSeconds: z.number().positive(),
});
export type HelloAnswer = z.output<typeof helloAnswer>;

const taskId = z.string().min(1);

export const platformTask = z.discriminatedUnion("type", [
  z.object({ id: taskId, type: z.literal("sync") }),
  // `request` is the request of docs/actions.md; the action layer validates it.
  z.object({ id: taskId, type: z.literal("action"), request: z.unknown() }),
]);
export type PlatformTask = z.output<typeof platformTask>;

export const nextTaskAnswer = z.object({ task: platformTask.nullable() });

/** Answers that carry nothing the connector needs: an empty body or any JSON object. */
export const acknowledgement = z.union([z.undefined(), z.looseObject({})]);
