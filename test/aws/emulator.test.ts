// The emulator's changes to moto (harness/moto_server.py) keep AWS's semantics: a cancelled
// TransactWriteItems leaves every item it named as it was (moto now saves those items instead of
// copying the table), and a standard queue with MessageGroupIds returns a quiet tenant's messages
// before a noisy tenant's backlog, as SQS fair queues do.
import {
  BatchWriteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  TransactWriteItemsCommand,
} from "@aws-sdk/client-dynamodb";
import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { awsClientConfig, createPkSkTable, type Moto, startMoto } from "./harness";

let moto: Moto;
let dynamo: DynamoDBClient;
let sqs: SQSClient;

beforeAll(async () => {
  moto = await startMoto();
  dynamo = new DynamoDBClient(awsClientConfig(moto.endpoint));
  sqs = new SQSClient({ ...awsClientConfig(moto.endpoint), useQueueUrlAsEndpoint: false });
});

afterAll(async () => {
  dynamo?.destroy();
  sqs?.destroy();
  await moto?.stop();
});

describe("TransactWriteItems", () => {
  const table = "transactions";
  const key = (sk: string) => ({ pk: { S: "run#1" }, sk: { S: sk } });
  const item = async (sk: string) =>
    (
      await dynamo.send(
        new GetItemCommand({ TableName: table, Key: key(sk), ConsistentRead: true }),
      )
    ).Item;

  beforeAll(async () => {
    await createPkSkTable(dynamo, table);
    await dynamo.send(
      new BatchWriteItemCommand({
        RequestItems: {
          [table]: ["run", "job#a", "job#b"].map((sk) => ({
            PutRequest: {
              Item: { ...key(sk), state: { S: "pending" }, n: { N: "5" } },
            },
          })),
        },
      }),
    );
  });

  it("a cancelled transaction leaves every item it named as it was, and says which failed", async () => {
    const error = await dynamo
      .send(
        new TransactWriteItemsCommand({
          TransactItems: [
            // Applied by moto before the third entry's condition fails: must be undone.
            {
              Update: {
                TableName: table,
                Key: key("run"),
                UpdateExpression: "ADD n :minus SET #state = :done",
                ExpressionAttributeNames: { "#state": "state" },
                ExpressionAttributeValues: { ":minus": { N: "-1" }, ":done": { S: "done" } },
              },
            },
            { Put: { TableName: table, Item: { ...key("job#new"), state: { S: "pending" } } } },
            {
              Update: {
                TableName: table,
                Key: key("job#a"),
                UpdateExpression: "SET #state = :done",
                ConditionExpression: "#state = :done",
                ExpressionAttributeNames: { "#state": "state" },
                ExpressionAttributeValues: { ":done": { S: "done" } },
              },
            },
          ],
        }),
      )
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "TransactionCanceledException" });
    const reasons = (error as { CancellationReasons?: { Code?: string }[] }).CancellationReasons;
    expect(reasons?.map((r) => r.Code)).toEqual(["None", "None", "ConditionalCheckFailed"]);
    expect(await item("run")).toMatchObject({ state: { S: "pending" }, n: { N: "5" } });
    expect(await item("job#new")).toBeUndefined();
    expect(await item("job#a")).toMatchObject({ state: { S: "pending" } });
  });

  it("a transaction whose conditions hold writes every item", async () => {
    const before = Number((await item("run"))?.n?.N);
    await dynamo.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          {
            Update: {
              TableName: table,
              Key: key("job#b"),
              UpdateExpression: "SET #state = :done",
              ConditionExpression: "#state = :pending",
              ExpressionAttributeNames: { "#state": "state" },
              ExpressionAttributeValues: { ":done": { S: "done" }, ":pending": { S: "pending" } },
            },
          },
          {
            Update: {
              TableName: table,
              Key: key("run"),
              UpdateExpression: "ADD n :minus",
              ExpressionAttributeValues: { ":minus": { N: "-1" } },
            },
          },
        ],
      }),
    );
    expect(await item("job#b")).toMatchObject({ state: { S: "done" } });
    expect(await item("run")).toMatchObject({ n: { N: String(before - 1) } });
  });
});

describe("fair queues", () => {
  it("returns a quiet tenant's messages before a noisy tenant's backlog", async () => {
    const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: "fair" }));
    const send = async (group: string, count: number) => {
      for (let i = 0; i < count; i += 10) {
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl,
            Entries: Array.from({ length: Math.min(10, count - i) }, (_, j) => ({
              Id: String(j),
              MessageBody: `${group}-${i + j}`,
              MessageGroupId: group,
            })),
          }),
        );
      }
    };
    const receive = async () =>
      (
        (await sqs.send(new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 10 })))
          .Messages ?? []
      ).map((m) => m.Body);

    await send("large", 60);
    // Nothing in flight: the queue's own order.
    expect(await receive()).toEqual(Array.from({ length: 10 }, (_, i) => `large-${i}`));
    await send("small", 3);
    // The large tenant's 10 in flight hold all of the consumers' processing time (over 10%): the
    // small tenant first.
    expect(await receive()).toEqual([
      "small-0",
      "small-1",
      "small-2",
      ...Array.from({ length: 7 }, (_, i) => `large-${10 + i}`),
    ]);
  });
});
