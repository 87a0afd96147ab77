import type { ConnectorDefinition, ProvisioningCapability } from "../types";
import {
  loadValimailConfig,
  VALIMAIL_SECRET_VARIABLES,
  VALIMAIL_VARIABLES,
  type ValimailConfig,
  valimailSettings,
} from "./config";
import { ValimailApi } from "./ValimailApi";
import { ValimailProvisioner } from "./ValimailProvisioner";
import { ValimailSyncer } from "./ValimailSyncer";

const provisioning = {
  actions: ["enable_user", "disable_user", "create_account", "grant", "revoke"],
  writesEnabled: (config) => config.provisioning,
  provisioner: (config, options) =>
    new ValimailProvisioner(config, new ValimailApi(config, options)),
} as const satisfies ProvisioningCapability<ValimailConfig>;

/** Valimail: syncs over SCIM, and writes once CONNECTOR_PROVISIONING is `true`. */
export const valimailDefinition = {
  name: "valimail",
  display: "Valimail",
  variablePrefix: "CONNECTOR_EMAILAUTH",
  variables: VALIMAIL_VARIABLES,
  settings: valimailSettings,
  secrets: VALIMAIL_SECRET_VARIABLES,
  // An owner administers the account (its users and their member types).
  privileged: { entitlementIds: ["member_type:owner:assigned"] },
  loadConfig: loadValimailConfig,
  syncer: (config, options) => new ValimailSyncer(config, options),
  provisioning,
} as const satisfies ConnectorDefinition<"valimail", ValimailConfig>;
