import type { ConnectorDefinition } from "../types";
import { BlacklineSyncer } from "./BlacklineSyncer";
import {
  BLACKLINE_SECRET_VARIABLES,
  BLACKLINE_VARIABLES,
  type BlacklineConfig,
  blacklineSettings,
  loadBlacklineConfig,
} from "./config";

/** BlackLine: read-only (no provisioning capability). */
export const blacklineDefinition = {
  name: "blackline",
  display: "BlackLine",
  variablePrefix: "CONNECTOR_ACCOUNTING",
  variables: BLACKLINE_VARIABLES,
  settings: blacklineSettings,
  secrets: BLACKLINE_SECRET_VARIABLES,
  // A role is a set of permissions in BlackLine: every role assignment is reviewed first.
  privileged: { resourceTypes: ["role"] },
  loadConfig: loadBlacklineConfig,
  syncer: (config, options) => new BlacklineSyncer(config, options),
} as const satisfies ConnectorDefinition<"blackline", BlacklineConfig>;
