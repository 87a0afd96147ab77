/**
 * List prices (US East, N. Virginia, USD; as published in 2026) and the cost of what a run asked
 * of AWS, from the harness's request counts (test/aws/harness/awsRequests.ts):
 * - S3 Standard: $0.005 per 1,000 PUT, COPY, POST or LIST requests; $0.0004 per 1,000 GET and
 *   other requests (https://aws.amazon.com/s3/pricing/).
 * - DynamoDB on demand (since November 2024): $0.625 per million write request units, $0.125 per
 *   million read request units (https://aws.amazon.com/dynamodb/pricing/on-demand/).
 * - SQS standard queue: $0.40 per million requests (each 64 KB of payload one request), and
 *   $0.10 per million more on a fair queue (messages with a MessageGroupId, as the sync-jobs
 *   queue's are; https://aws.amazon.com/sqs/pricing/, fair queues since July 2025).
 * - Secrets Manager: $0.05 per 10,000 API calls (https://aws.amazon.com/secrets-manager/pricing/).
 * - Lambda on Arm: $0.0000133334 per GB-second and $0.20 per million requests
 *   (https://aws.amazon.com/lambda/pricing/).
 */
import type { AwsRequestCounts } from "../test/aws/harness";

export const S3_USD_PER_PUT = 0.005 / 1_000;
export const S3_USD_PER_GET = 0.0004 / 1_000;
export const DYNAMODB_USD_PER_WRITE_UNIT = 0.625 / 1e6;
export const DYNAMODB_USD_PER_READ_UNIT = 0.125 / 1e6;
export const SQS_FAIR_USD_PER_REQUEST = (0.4 + 0.1) / 1e6;
export const SECRETS_USD_PER_CALL = 0.05 / 10_000;
export const LAMBDA_ARM64_USD_PER_GB_SECOND = 0.0000133334;
export const LAMBDA_USD_PER_REQUEST = 0.2 / 1e6;

/** S3 requests billed as PUTs (PUT, COPY, POST, LIST) and as GETs (GET, HEAD); DELETE is free. */
export function s3RequestClasses(counts: AwsRequestCounts): { put: number; get: number } {
  let put = 0;
  let get = 0;
  for (const [kind, n] of Object.entries(counts.s3)) {
    if (S3_PUT_CLASS.has(kind)) put += n;
    else if (kind !== "DELETE") get += n;
  }
  return { put, get };
}

/** S3's request classes: PUT, COPY, POST and LIST are billed as PUTs, the rest as GETs. */
const S3_PUT_CLASS = new Set(["PUT", "POST", "LIST", "COPY"]);

export interface AwsCost {
  s3: number;
  dynamodb: number;
  sqs: number;
  secrets: number;
  total: number;
}

/**
 * What the counted requests cost. `pollerRequests` adds the SQS requests of Lambda's event source
 * poller (a receive and a delete a batch), which the harness plays outside the counted functions.
 */
export function awsCost(counts: AwsRequestCounts, pollerRequests = 0): AwsCost {
  const requests = s3RequestClasses(counts);
  const s3 = requests.put * S3_USD_PER_PUT + requests.get * S3_USD_PER_GET;
  const dynamodb =
    counts.dynamodbUnits.write * DYNAMODB_USD_PER_WRITE_UNIT +
    counts.dynamodbUnits.read * DYNAMODB_USD_PER_READ_UNIT;
  const sqs = ((counts.sqs.billed ?? 0) + pollerRequests) * SQS_FAIR_USD_PER_REQUEST;
  const secretCalls = Object.entries(counts.other)
    .filter(([key]) => key.startsWith("secretsmanager:"))
    .reduce((n, [, calls]) => n + calls, 0);
  const secrets = secretCalls * SECRETS_USD_PER_CALL;
  return { s3, dynamodb, sqs, secrets, total: s3 + dynamodb + sqs + secrets };
}
