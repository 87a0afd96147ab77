import { ActionError } from "../actions";
import type { Connector, ConnectorDefinition } from "./types";
import type { UpstreamTuning } from "./upstreamTuning";

/** The runtimes' view of a definition: its settings' type no longer shows. */
export function defineConnector<Name extends string, Config extends UpstreamTuning>(
  definition: ConnectorDefinition<Name, Config>,
): Connector<Name> {
  const { provisioning, loadConfig, syncer, ...identity } = definition;
  return {
    ...identity,
    sync(env, options = {}) {
      const config = loadConfig(env);
      return {
        connector: syncer(config, options),
        concurrency: config.maxConcurrency,
        requestsPerSecond: config.requestsPerSecond,
      };
    },
    provisioner(env, options = {}) {
      if (!provisioning) {
        throw new ActionError(
          "unsupported",
          `${identity.display} is read-only: this connector syncs it and changes nothing`,
        );
      }
      return provisioning.provisioner(loadConfig(env), options);
    },
    capabilities(env) {
      return provisioning?.writesEnabled(loadConfig(env))
        ? ["sync", ...provisioning.actions]
        : ["sync"];
    },
  };
}
