import { UsageError } from "../errors";
import { blacklineDefinition } from "./blackline/definition";
import { defineConnector } from "./defineConnector";
import type { Connector } from "./types";
import { valimailDefinition } from "./valimail/definition";

/**
 * The connectors this project builds, one definition per folder: a third connector is its folder
 * and one line here. Nothing outside `lib/connectors` branches on a connector's name: the
 * runtimes take one from this list by the name a user gives, and use what its definition says.
 */
export const CONNECTORS = [
  defineConnector(blacklineDefinition),
  defineConnector(valimailDefinition),
];

export type ConnectorName = (typeof CONNECTORS)[number]["name"];
export const CONNECTOR_NAMES = CONNECTORS.map((connector) => connector.name) as [
  ConnectorName,
  ...ConnectorName[],
];

/** The names as help and messages list them: `blackline or valimail`. */
export const CONNECTOR_CHOICES = CONNECTOR_NAMES.join(" or ");

export function parseConnectorName(value: string): ConnectorName {
  const name = value.trim().toLowerCase();
  if ((CONNECTOR_NAMES as readonly string[]).includes(name)) return name as ConnectorName;
  throw new UsageError(`unknown connector "${value}"; use one of: ${CONNECTOR_NAMES.join(", ")}`);
}

const BY_NAME = Object.fromEntries(CONNECTORS.map((connector) => [connector.name, connector])) as {
  [Name in ConnectorName]: Connector<Name>;
};

export function connectorNamed<Name extends ConnectorName>(name: Name): Connector<Name> {
  return BY_NAME[name];
}

export type { Connector, LoadedSyncer, PrivilegedEntitlements } from "./types";
export { isPrivileged } from "./types";
export { UpstreamConnectors } from "./UpstreamConnectors";
