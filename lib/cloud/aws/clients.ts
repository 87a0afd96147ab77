import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { S3Client } from "@aws-sdk/client-s3";
import { SecretsManagerClient } from "@aws-sdk/client-secrets-manager";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";

/**
 * The AWS clients of the cloud runtime, made once per process (a warm Lambda reuses them). Each
 * honours the SDK's standard configuration: region, credentials, and `AWS_ENDPOINT_URL` for an
 * emulator. With an endpoint override, SQS is sent to that endpoint whatever host a queue URL
 * names (a stack's queue URLs name `sqs.<region>.amazonaws.com`), and S3 uses path-style names.
 */
export interface AwsClients {
  dynamo: DynamoDBDocumentClient;
  sqs: SQSClient;
  s3: S3Client;
  secrets: SecretsManagerClient;
}

/** Made again when `AWS_ENDPOINT_URL` changes: a bench's next emulator in the same process. */
let clients: { endpoint: string | undefined; made: AwsClients } | undefined;

export function awsClients(): AwsClients {
  const endpoint = process.env.AWS_ENDPOINT_URL;
  if (clients && clients.endpoint === endpoint) return clients.made;
  const emulated = Boolean(endpoint);
  const made = {
    dynamo: DynamoDBDocumentClient.from(new DynamoDBClient({}), {
      marshallOptions: { removeUndefinedValues: true },
    }),
    sqs: new SQSClient(emulated ? { useQueueUrlAsEndpoint: false } : {}),
    s3: new S3Client(emulated ? { forcePathStyle: true } : {}),
    secrets: new SecretsManagerClient({}),
  };
  clients = { endpoint, made };
  return made;
}
