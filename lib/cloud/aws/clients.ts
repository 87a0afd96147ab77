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

let clients: AwsClients | undefined;

export function awsClients(): AwsClients {
  if (clients) return clients;
  const emulated = Boolean(process.env.AWS_ENDPOINT_URL);
  clients = {
    dynamo: DynamoDBDocumentClient.from(new DynamoDBClient({}), {
      marshallOptions: { removeUndefinedValues: true },
    }),
    sqs: new SQSClient(emulated ? { useQueueUrlAsEndpoint: false } : {}),
    s3: new S3Client(emulated ? { forcePathStyle: true } : {}),
    secrets: new SecretsManagerClient({}),
  };
  return clients;
}
