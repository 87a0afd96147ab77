export { loadValimailConfig, VALIMAIL_VARIABLES, type ValimailConfig } from "./config";
export { valimailDefinition } from "./definition";
export { ValimailApi } from "./ValimailApi";
export { ValimailProvisioner } from "./ValimailProvisioner";
export { ValimailSyncer } from "./ValimailSyncer";
