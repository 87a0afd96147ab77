export {
  loadValimailConfig,
  VALIMAIL_SECRET_VARIABLES,
  VALIMAIL_VARIABLES,
  type ValimailConfig,
} from "./config";
export { ValimailApi } from "./ValimailApi";
export { ValimailConnector } from "./ValimailConnector";
export { ValimailProvisioner } from "./ValimailProvisioner";
