import {
  ActionError,
  type ActionReply,
  type ActionRequest,
  type Provisioner,
  replayAction,
  replyMemoryOf,
  runAction,
} from "../actions";
import type { UpstreamConnectors } from "../connectors";
import { ConfigError } from "../errors";
import { newRequestContext } from "../http";
import type { Logger } from "../logging";
import { ACTION_GRACE_MS } from "./constants";
import type { ServiceState } from "./ServiceState";

export interface ActionTaskParts {
  upstream: UpstreamConnectors;
  /** Remembers the replies by `requestId`, across restarts. */
  state: ServiceState;
  /** The service's stop: an action in progress gets ACTION_GRACE_MS to finish, then is aborted. */
  stop: AbortSignal;
  logger: Logger;
}

/**
 * An action task: the action replay of lib/actions (shared with the cloud) over the state file,
 * carried out with the provisioner from the settings as they are now.
 */
export function runActionTask(raw: unknown, parts: ActionTaskParts): Promise<ActionReply> {
  return replayAction(raw, {
    memory: replyMemoryOf(parts.state),
    run: (request, logger) => carryOut(request, logger, parts),
    logger: parts.logger,
  });
}

async function carryOut(
  request: ActionRequest,
  logger: Logger,
  parts: ActionTaskParts,
): Promise<ActionReply> {
  // A stop lets an action in progress finish within a grace, then aborts it.
  const grace = new AbortController();
  let graceTimer: NodeJS.Timeout | undefined;
  const onStop = () => {
    graceTimer = setTimeout(() => grace.abort(), ACTION_GRACE_MS);
  };
  parts.stop.addEventListener("abort", onStop, { once: true });
  try {
    return await runAction(
      request,
      () => provisionerOf(parts.upstream),
      newRequestContext({ logger, signal: grace.signal }),
    );
  } finally {
    parts.stop.removeEventListener("abort", onStop);
    clearTimeout(graceTimer);
  }
}

/**
 * The provisioner from the settings as they are now. Settings that no longer read (a secret
 * file gone) are the host's fault, not the request's: the reply says to try again, so it is
 * not remembered.
 */
function provisionerOf(upstream: UpstreamConnectors): Provisioner {
  try {
    return upstream.provisioner();
  } catch (error) {
    if (!ConfigError.is(error)) throw error;
    throw new ActionError(
      "upstream_error",
      `the connector host's configuration is not valid (${error.message}); ask again once it is fixed`,
    );
  }
}
