import {
  IdempotencyAlreadyInProgressError,
  IdempotencyConfig,
  IdempotencyValidationError,
  makeIdempotent,
} from "@aws-lambda-powertools/idempotency";
import { DynamoDBPersistenceLayer } from "@aws-lambda-powertools/idempotency/dynamodb";
import type { Context } from "aws-lambda";
import { type ReplyMemory, RequestIdTakenError } from "../../actions";

/** Replies are remembered this long: a platform retrying within a day gets the first reply. */
const REMEMBER_SECONDS = 24 * 3600;

/**
 * A function's reply memory on the stage's idempotency table (Powertools idempotency on
 * DynamoDB): one record per `requestId`, kept a day, holding the reply and a hash of the parts of
 * the request `payloadPath` (JMESPath) selects, so that the same id sent with another request is
 * refused. Made once per warm function; the records of two functions never meet (Powertools
 * keys them by the function's name).
 */
export class IdempotentReplies<Request extends { requestId: string }, Reply> {
  readonly #config: IdempotencyConfig;
  readonly #run: (request: Request, work: () => Promise<Reply>) => Promise<Reply>;

  constructor(table: string, payloadPath: string) {
    this.#config = new IdempotencyConfig({
      eventKeyJmesPath: "requestId",
      payloadValidationJmesPath: payloadPath,
      expiresAfterSeconds: REMEMBER_SECONDS,
      throwOnNoIdempotencyKey: true,
    });
    this.#run = makeIdempotent((_request: Request, work: () => Promise<Reply>) => work(), {
      persistenceStore: new DynamoDBPersistenceLayer({ tableName: table }),
      config: this.#config,
    });
  }

  /** The memory for one invocation (its remaining time bounds an in-progress record). */
  memory(lambdaContext: Context): ReplyMemory<Request, Reply> {
    return {
      once: async (request, run) => {
        this.#config.registerLambdaContext(lambdaContext);
        try {
          return await this.#run(request, run);
        } catch (error) {
          if (error instanceof IdempotencyValidationError) {
            throw new RequestIdTakenError("request_id_reused", request.requestId);
          }
          if (error instanceof IdempotencyAlreadyInProgressError) {
            throw new RequestIdTakenError("request_in_progress", request.requestId);
          }
          throw error;
        }
      },
    };
  }
}
