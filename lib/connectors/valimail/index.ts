export { loadValimailConfig, VALIMAIL_VARIABLES, type ValimailConfig } from "./config";
export { valimailDefinition } from "./definition";
export { ValimailApi } from "./ValimailApi";
export { ValimailConnector } from "./ValimailConnector";
export { ValimailProvisioner } from "./ValimailProvisioner";
