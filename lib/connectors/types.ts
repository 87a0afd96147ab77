/** The connector kinds this project builds. */
export const CONNECTOR_NAMES = ["blackline", "valimail"] as const;
export type ConnectorName = (typeof CONNECTOR_NAMES)[number];
