export { loadValimailConfig, type ValimailConfig } from "./config";
export { ValimailApi } from "./ValimailApi";
export { ValimailConnector } from "./ValimailConnector";
export { ValimailProvisioner } from "./ValimailProvisioner";
