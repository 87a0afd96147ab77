/**
 * docs/configuration.md, rendered from the settings' schemas: each variable's name, type, default,
 * whether it is a secret, and its meaning, as registered beside its schema (`.describe()`,
 * `.meta()`: lib/config's `SettingMeta`). `npm run docs` writes the page;
 * test/docs/configuration.test.ts fails when the committed page differs.
 */
import * as z from "zod";
import { cloudEnvironment } from "../lib/cloud/config";
import { formatDuration, type SettingMeta } from "../lib/config";
import { CONNECTORS } from "../lib/connectors";
import { MAX_REMOVAL_VARIABLE, removalLimitSetting } from "../lib/guard";
import { PLATFORM_SECRET_VARIABLES, platformSettingsSchema } from "../lib/platform";
import { SERVICE_VARIABLE_DOCS } from "../lib/service/config";
import { httpSettingsSchema } from "../lib/service/httpSettings";

export const CONFIGURATION_PAGE = "docs/configuration.md";

export interface SettingRow {
  variable: string;
  type: string;
  default: string;
  secret: boolean;
  meaning: string;
}

/** The part of zod's definition of a schema the walk reads. */
interface Definition {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  shape?: Record<string, z.ZodType>;
  defaultValue?: unknown;
  format?: string;
}

const definitionOf = (schema: z.ZodType) => schema._zod.def as unknown as Definition;

/** The fields of an object schema, under the checks and transforms around it. */
export function fieldsOf(schema: z.ZodType): Record<string, z.ZodType> {
  let current = schema;
  while (definitionOf(current).type === "pipe") current = definitionOf(current).in as z.ZodType;
  const { type, shape } = definitionOf(current);
  if (type !== "object" || !shape) throw new Error(`not an object schema: ${type}`);
  return shape;
}

/** A field's row: its meta, the outer wrapper's first, then those of the schemas it wraps. */
export function settingRow(variable: string, schema: z.ZodType, secret: boolean): SettingRow {
  const meta: SettingMeta = {};
  let optional = false;
  let defaultValue: unknown;
  let current: z.ZodType | undefined = schema;
  let base = definitionOf(schema);
  while (current) {
    Object.assign(meta, { ...(z.globalRegistry.get(current) as SettingMeta), ...meta });
    base = definitionOf(current);
    if (base.type === "optional") optional = true;
    else if (base.type === "default") defaultValue ??= base.defaultValue;
    else break;
    current = base.innerType;
  }
  if (!meta.description) throw new Error(`${variable} has no description beside its schema`);
  return {
    variable,
    type: meta.type ?? typeInWords(variable, base),
    default:
      meta.defaultText ??
      (defaultValue === undefined
        ? optional
          ? "unset"
          : "required"
        : `\`${meta.unit === "ms" ? formatDuration(Number(defaultValue)) : String(defaultValue)}\``),
    secret,
    meaning: meta.description,
  };
}

function typeInWords(variable: string, definition: Definition): string {
  if (definition.type === "string") return definition.format === "url" ? "URL" : "text";
  throw new Error(`${variable}: say its type in words (meta \`type\`) beside its schema`);
}

/** Every field of `schema` as a row, in the schema's order. */
export function settingRows(schema: z.ZodType, secrets: readonly string[] = []): SettingRow[] {
  return Object.entries(fieldsOf(schema)).map(([variable, field]) =>
    settingRow(variable, field, secrets.includes(variable)),
  );
}

function metaRow(variable: string, meta: SettingMeta): SettingRow {
  return settingRow(variable, z.string().meta(meta), false);
}

/** A docs page named in a description, linked from this page (itself in docs/). */
const linked = (text: string) => text.replace(/\bdocs\/([\w-]+\.md)\b/g, "[$1]($1)");

/** A table cell: one line, its pipes escaped. */
const cell = (text: string) => linked(text.replaceAll("|", "\\|").replaceAll("\n", " "));

function table(rows: SettingRow[]): string[] {
  return [
    "| variable | type | default | secret | meaning |",
    "| --- | --- | --- | --- | --- |",
    ...rows.map(
      (row) =>
        `| \`${row.variable}\` | ${cell(row.type)} | ${cell(row.default)} | ${row.secret ? `yes (or \`${row.variable}_FILE\`)` : "no"} | ${cell(row.meaning)} |`,
    ),
  ];
}

/** The sections of the page: a title, what reads them, and the rows. */
export function configurationSections(): { title: string; intro: string; rows: SettingRow[] }[] {
  return [
    ...CONNECTORS.map((connector) => ({
      title: `${connector.display} (\`${connector.name}\`)`,
      intro: `Read by \`sync ${connector.name}\`, \`validate ${connector.name}\`, the write commands, the service and \`cloud put-instance\` (stored in the instance's secret).`,
      rows: settingRows(connector.settings, connector.secrets),
    })),
    {
      title: "Every connector",
      intro: "Read by `sync`, the service and the cloud runtime (from the instance's secret).",
      rows: [settingRow(MAX_REMOVAL_VARIABLE, removalLimitSetting, false)],
    },
    {
      title: "The platform",
      intro:
        "Read by the self-hosted service; `cloud put-instance` stores the first three in the instance's secret, as the cloud runtime's upload identity (docs/platform-protocol.md).",
      rows: settingRows(platformSettingsSchema, PLATFORM_SECRET_VARIABLES),
    },
    {
      title: "The self-hosted service",
      intro: "Read by `service` (docs/service.md), besides the connector's and the platform's.",
      rows: [
        ...Object.entries(SERVICE_VARIABLE_DOCS).map(([variable, meta]) => metaRow(variable, meta)),
        ...settingRows(httpSettingsSchema),
      ],
    },
    {
      title: "The cloud runtime's functions",
      intro:
        "Set on each function by `serverless.yml`, not by operators; a wrong one fails naming the variable (redeploy the stack).",
      rows: settingRows(cloudEnvironment),
    },
  ];
}

/** The whole page, as committed. */
export function renderConfigurationPage(): string {
  const lines = [
    "# Configuration",
    "",
    "<!-- Generated by `npm run docs` (scripts/configReference.ts) from the settings' schemas and",
    "the descriptions beside them; test/docs/configuration.test.ts fails when this page is stale. -->",
    "",
    "Every runtime reads the same variables with the same schema, so the same mistake gets the same",
    "message everywhere: it names the variable, says what is wrong and how to fix it, and exits 2 (a",
    "BlackLine scope without an `instance_` token exits 3, as BlackLine's own answer would).",
    "",
    "- **Where values come from**: the environment, and `--env-file FILE` (the environment wins over",
    "  the file). The service reads the connector's variables again before each sync and each action;",
    "  the cloud runtime reads an instance's from its secret, written by `cloud put-instance`.",
    "- **Blank is unset**: a variable set to an empty or blank value counts as not set.",
    "- **Secrets** may be read from a file instead: `<NAME>_FILE` holds its path (setting both is an",
    "  error); see [security.md](security.md#secrets).",
    "- **Durations** are `90s`, `30m`, `6h`, `1500ms`, or a whole number of seconds.",
    "- **Addresses** must be `https://`, except on a loopback host (`127.0.0.1`, `[::1]`,",
    "  `localhost`), which may use `http://`.",
  ];
  for (const section of configurationSections()) {
    lines.push("", `## ${section.title}`, "", linked(section.intro), "", ...table(section.rows));
  }
  return `${lines.join("\n")}\n`;
}
