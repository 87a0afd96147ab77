// The action replay by requestId shared by the service (its state file, through replyMemoryOf)
// and the cloud (Powertools idempotency on DynamoDB: test/aws/cloud.test.ts). The store here is
// an object in memory with the state file's two operations.
import { describe, expect, it } from "vitest";
import {
  type ActionReply,
  type ActionRequest,
  failedReply,
  type ReplyMemory,
  type ReplyStore,
  RequestIdTakenError,
  replayAction,
  replyMemoryOf,
} from "../../lib/actions";
import { silentLogger } from "../../lib/logging";

const request = (requestId: string, user = "u-1"): ActionRequest => ({
  requestId,
  connectorId: "bl",
  action: "disable_user",
  args: { user_id: user },
});

function memoryStore() {
  const replies = new Map<string, { fingerprint: string; reply: ActionReply }>();
  const store: ReplyStore = {
    reply: (requestId) => replies.get(requestId),
    remember: async (fingerprint, reply) => {
      replies.set(reply.requestId, { fingerprint, reply });
    },
  };
  return { store, replies };
}

/** Carries out a request with the replies given in turn, counting the runs. */
function runner(...replies: ((r: ActionRequest) => ActionReply)[]) {
  let runs = 0;
  return {
    get runs() {
      return runs;
    },
    run: async (r: ActionRequest) => (replies[runs++] as (r: ActionRequest) => ActionReply)(r),
  };
}

const succeeded = (r: ActionRequest): ActionReply => ({
  requestId: r.requestId,
  status: "succeeded",
  result: { user_id: "u-1", active: false, changed: true },
});
const rateLimited = (r: ActionRequest) => failedReply(r.requestId, "rate_limited", "slow down");
const notFound = (r: ActionRequest) => failedReply(r.requestId, "not_found", "no such user");

describe("replayAction", () => {
  it("runs a requestId once: asked again, it answers the first reply and runs nothing", async () => {
    const memory = replyMemoryOf(memoryStore().store);
    const actions = runner(succeeded, notFound);
    const first = await replayAction(request("r1"), {
      memory,
      run: actions.run,
      logger: silentLogger,
    });
    const again = await replayAction(request("r1"), {
      memory,
      run: actions.run,
      logger: silentLogger,
    });
    expect(again).toEqual(first);
    expect(first.status).toBe("succeeded");
    expect(actions.runs).toBe(1);
  });

  it("remembers a final failure, and not a reply that says to try again", async () => {
    const { store, replies } = memoryStore();
    const memory = replyMemoryOf(store);
    const actions = runner(rateLimited, succeeded, notFound);
    const options = { memory, run: actions.run, logger: silentLogger };
    expect(await replayAction(request("r1"), options)).toMatchObject({
      status: "failed",
      error: { code: "rate_limited", retryable: true },
    });
    expect(replies.size).toBe(0);
    expect((await replayAction(request("r1"), options)).status).toBe("succeeded");
    expect(await replayAction(request("r2"), options)).toMatchObject({
      error: { code: "not_found", retryable: false },
    });
    expect(await replayAction(request("r2"), options)).toMatchObject({
      error: { code: "not_found" },
    });
    expect(actions.runs).toBe(3);
  });

  it("refuses the same requestId with a different request, and runs nothing", async () => {
    const memory = replyMemoryOf(memoryStore().store);
    const actions = runner(succeeded, succeeded);
    const options = { memory, run: actions.run, logger: silentLogger };
    await replayAction(request("r1", "u-1"), options);
    expect(await replayAction(request("r1", "u-2"), options)).toEqual({
      requestId: "r1",
      status: "failed",
      error: {
        code: "invalid_request",
        message:
          "requestId r1 was used before for a different request; use a new requestId for a new request",
        retryable: false,
      },
    });
    expect(actions.runs).toBe(1);
  });

  it("answers a malformed request invalid_request without asking the memory", async () => {
    const untouched: ReplyMemory = {
      once: () => {
        throw new Error("the memory was asked");
      },
    };
    const reply = await replayAction(
      { requestId: "r1", action: "disable_user" },
      { memory: untouched, run: runner().run, logger: silentLogger },
    );
    expect(reply).toMatchObject({
      requestId: "r1",
      status: "failed",
      error: { code: "invalid_request", retryable: false },
    });
  });

  it("a request being carried out elsewhere is answered upstream_error, to ask again", async () => {
    const busy: ReplyMemory = {
      once: () => Promise.reject(new RequestIdTakenError("request_in_progress", "r1")),
    };
    expect(
      await replayAction(request("r1"), { memory: busy, run: runner().run, logger: silentLogger }),
    ).toMatchObject({
      status: "failed",
      error: {
        code: "upstream_error",
        message:
          "the request r1 is being carried out right now; ask again for its reply in a moment",
        retryable: true,
      },
    });
  });
});
