import { CONNECTORS } from "../connectors";
import { UsageError } from "../errors";

/** The connector a snapshot names (its `sync_start`), or a UsageError naming the ones known. */
export function connectorOf(name: string) {
  const connector = CONNECTORS.find((c) => c.name === name);
  if (!connector)
    throw new UsageError(
      `the snapshot is of connector "${name}", which this version does not know (${CONNECTORS.map((c) => c.name).join(", ")})`,
    );
  return connector;
}

/** The entitlements a connector counts as privileged, by its name. */
export const privilegedFor = (name: string) => connectorOf(name).privileged;
