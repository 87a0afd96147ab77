import * as z from "zod";
import { blankToUndefined } from "../config/environment";
import type { SettingMeta } from "../config/fields";
import { ConfigError } from "../errors";
import { DEFAULT_MAX_REMOVAL_PERCENT, GUARD_OFF } from "./constants";

/** The largest share of users or grants a snapshot may remove, in percent, or `off`. */
export type RemovalLimit = number | typeof GUARD_OFF;

const limitSchema = z.union([
  z.string().trim().toLowerCase().pipe(z.literal(GUARD_OFF)),
  z
    .string()
    .trim()
    .regex(/^\d{1,3}(\.\d+)?$/)
    .transform(Number)
    .pipe(z.number().min(0).max(100)),
]);

/** The limit's schema as docs/configuration.md shows it (the default is applied below). */
export const removalLimitSetting = limitSchema.meta({
  type: `percentage, 0 to 100, or \`${GUARD_OFF}\``,
  defaultText: `\`${DEFAULT_MAX_REMOVAL_PERCENT}\``,
  description: `The removal guard's limit, every runtime (docs/removal-guard.md): a complete snapshot that removes strictly more than this share of the previous one's users, or of its grants, is held, not published; \`${GUARD_OFF}\` publishes every complete snapshot. \`sync --max-removal-percent\` overrides it for one run.`,
} satisfies SettingMeta);

/**
 * Parses the limit from a variable or a flag (`source` names it in the message). Unset or blank is
 * the default, 30; `off` disables the guard.
 */
export function parseRemovalLimit(value: string | undefined, source: string): RemovalLimit {
  const given = blankToUndefined(value);
  if (given === undefined) return DEFAULT_MAX_REMOVAL_PERCENT;
  const parsed = limitSchema.safeParse(given);
  if (parsed.success) return parsed.data;
  throw new ConfigError([
    {
      variable: source,
      message: `"${given}" is not a limit; write a percentage from 0 to 100 (default ${DEFAULT_MAX_REMOVAL_PERCENT}: a snapshot removing more than that share of the previous one's users or grants is held), or ${GUARD_OFF} to publish every complete snapshot without comparing`,
    },
  ]);
}
