import type { Context } from "aws-lambda";
import { IdempotentReplies } from "../aws/idempotentReplies";
import type { CloudConfig } from "../config";
import { startRun } from "../lifecycle";
import type { Telemetry } from "../observability";
import { answerSettings } from "./answerSettings";
import type { SettingsReply } from "./reply";
import { SETTINGS_PAYLOAD_PATH, type SettingsRequest } from "./request";

/** Made at the first request, and kept while the function is warm. */
let replies: IdempotentReplies<SettingsRequest, SettingsReply> | undefined;

/**
 * The settings function (docs/settings.md): `answerSettings` on this stage, its replies
 * remembered a day by `requestId` on the idempotency table, and a save's first sync started here
 * as the scheduler starts one (`startRun`: the run claimed on the instance's row, its root jobs
 * sent to the sync-jobs queue, the label `syncing`), not by invoking another function.
 */
export async function handleSettings(
  event: unknown,
  lambdaContext: Context,
  config: CloudConfig,
  telemetry: Telemetry,
): Promise<SettingsReply> {
  replies ??= new IdempotentReplies(config.idempotencyTable, SETTINGS_PAYLOAD_PATH);
  return answerSettings(event, {
    stage: {
      instancesTable: config.instancesTable,
      secretsPrefix: config.secretsPrefix,
      startSync: (connectorId) => startRun(config, connectorId, telemetry),
    },
    memory: replies.memory(lambdaContext),
    logger: telemetry.logger,
  });
}
