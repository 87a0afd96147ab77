import * as z from "zod";
import { CONNECTOR_NAMES } from "../../connectors";
import { connectorIdSchema } from "../instanceSettings";

/**
 * The one settings request shape (docs/settings.md), for the settings function and the
 * operator commands. Only its shape is checked here; what the settings say is checked by the
 * connector's schemas (`settingsToStore`), so that a field's mistake is an `invalid` reply naming
 * it, and only a request that is not one is `invalid_request`.
 */

/** Variable names to values; `null` keeps a secret's stored value. */
const settingsMap = z.record(
  z
    .string()
    .regex(
      /^[A-Z][A-Z0-9_]{0,127}$/,
      "a setting is named by its variable, e.g. CONNECTOR_CLIENT_ID",
    ),
  z.string().max(8192, "a setting's value is at most 8192 characters").nullable(),
);

/** Every request's own part: what a reply to a request too broken to parse still names. */
export const requestIdPart = z.object({ requestId: z.string().min(1).max(128) });
const base = requestIdPart.shape;

export const settingsRequest = z.discriminatedUnion("op", [
  z
    .object({
      ...base,
      op: z.literal("save"),
      connectorId: connectorIdSchema,
      connector: z.enum(CONNECTOR_NAMES),
      settings: settingsMap,
      /** `90s`, `30m`, `1h`, `24h` or seconds; absent: the instance's interval, or 1h. */
      interval: z.string().min(1).max(32).optional(),
      /** false: store only; the first sync starts on the next schedule. */
      sync: z.boolean().default(true),
    })
    .strict(),
  z
    .object({
      ...base,
      op: z.literal("test"),
      connector: z.enum(CONNECTOR_NAMES),
      settings: settingsMap,
      /** The instance whose stored secrets a `null` keeps (a Settings page that shows no secret). */
      connectorId: connectorIdSchema.optional(),
    })
    .strict(),
  z.object({ ...base, op: z.literal("get"), connectorId: connectorIdSchema }).strict(),
  z
    .object({
      ...base,
      op: z.literal("remove"),
      connectorId: connectorIdSchema,
      /** true: remove even while a run is in flight (the run then ends `error`). */
      force: z.boolean().default(false),
    })
    .strict(),
]);

export type SettingsRequest = z.infer<typeof settingsRequest>;
export type SaveRequest = Extract<SettingsRequest, { op: "save" }>;
export type TestRequest = Extract<SettingsRequest, { op: "test" }>;

/**
 * What a repeated `requestId` is compared on (JMESPath over the request): everything but the
 * settings' values, so that no hash of a secret is stored beside the reply.
 */
export const SETTINGS_PAYLOAD_PATH = "[op, connectorId, connector, interval, sync, force]";
