import { type ConnectorName, connectorNamed } from "../../connectors";
import { ConfigError, type ConfigIssue, CredentialsRejectedError } from "../../errors";
import { registerSecret } from "../../redact";
import { instanceVariables, validateInstanceSettings } from "../instanceSettings";

/**
 * The settings of a request as an instance's secret would hold them: each `null` of a secret
 * replaced by the stored value (kept), values trimmed, blanks left out, and everything checked by
 * `validateInstanceSettings`, the code `sync` and `cloud put-instance` validate with. A name that
 * is not one of the instance's variables is refused (a `<NAME>_FILE` too: nothing here reads a
 * file), and so is `null` for a setting that is not secret. Throws one ConfigError naming every
 * field at fault; a scope the upstream would refuse (the only check that names credentials)
 * throws CredentialsRejectedError with its field when it is the only mistake, as `sync` does.
 */
export function settingsToStore(
  connector: ConnectorName,
  given: Readonly<Record<string, string | null>>,
  stored: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  const { variables, secrets } = instanceVariables(connector);
  const issues: ConfigIssue[] = [];
  const settings: Record<string, string> = {};
  for (const [name, value] of Object.entries(given)) {
    if (!variables.has(name)) {
      issues.push({ variable: name, message: notASetting(name, connector) });
    } else if (value === null) {
      const kept = secrets.has(name) ? stored?.[name] : undefined;
      if (kept !== undefined) settings[name] = kept;
      else if (!secrets.has(name)) {
        issues.push({
          variable: name,
          message:
            "is null, which keeps a stored value only for a secret field; send this field's value",
        });
      }
      // A secret with nothing stored to keep is missing: the connector's schema says so.
    } else if (value.trim() !== "") {
      settings[name] = value.trim();
    }
  }
  for (const name of secrets) registerSecret(settings[name]);
  try {
    validateInstanceSettings(connector, settings);
  } catch (error) {
    // A field refused above is not said again as missing.
    const refused = new Set(issues.map((issue) => issue.variable));
    if (ConfigError.is(error)) issues.push(...error.issues.filter((i) => !refused.has(i.variable)));
    else if (issues.length > 0 && CredentialsRejectedError.is(error) && error.field) {
      issues.push({ variable: error.field, message: error.message });
    } else throw error;
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return settings;
}

function notASetting(name: string, connector: ConnectorName): string {
  const { display, variablePrefix } = connectorNamed(connector);
  if (name.endsWith("_FILE")) {
    return `is not read here (a settings request reads no file); remove it and send the value itself as ${name.slice(0, -"_FILE".length)}`;
  }
  return `is not a setting of a ${display} instance; remove it (its settings are the ${variablePrefix}_* variables of ${display}, CONNECTOR_PLATFORM_URL, CONNECTOR_CLIENT_ID, CONNECTOR_CLIENT_SECRET and CONNECTOR_MAX_REMOVAL_PERCENT)`;
}
