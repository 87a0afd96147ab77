import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli } from "../helpers/cli";
import { ECHO_ITEMS, type EchoMode, echoAnswer } from "./echoUpstream";
import { SECRETS } from "./secretForms";
import { type SecretUpstreams, startSecretUpstreams } from "./secretUpstreams";

/**
 * The command line at its most verbose (`--verbose`): a sync and an action of each connector,
 * against the simulators and against an upstream that fails and echoes what it was sent. No form
 * of any secret (raw, trimmed, form- or URL-encoded, JSON, base64, HTTP Basic) and no issued token
 * appears on stdout, on stderr, in a reply or in a snapshot.
 */

let up: SecretUpstreams;

beforeAll(async () => {
  // The Valimail app id comes from a file ending in CRLF: sent trimmed, like the API key.
  up = await startSecretUpstreams({
    tempPrefix: "ac-secrets-cli-",
    blackline: { size: { users: 30, teams: 4, roles: 3 } },
    valimailAppId: "file",
  });
});

afterAll(async () => {
  await up?.close();
});

describe("no secret reaches the command line's output (--verbose)", () => {
  it("syncs and actions of each connector against the simulators", async () => {
    for (const clientAuth of ["body", "basic"] as const) {
      const out = join(up.dir, `blackline-${clientAuth}.sync.jsonl`);
      const sync = await cli(
        ["sync", "blackline", "--verbose", "--out", out],
        up.blacklineEnv(up.blackline.url, clientAuth),
      );
      expect(sync.code, sync.stderr).toBe(0);
      up.record(`sync blackline (${clientAuth})`, sync);
      up.outputs.push({
        what: `blackline snapshot (${clientAuth})`,
        text: await readFile(out, "utf8"),
      });
      const json = await cli(
        ["sync", "blackline", "--verbose", "--json", "--out", `${out}.gz`],
        up.blacklineEnv(up.blackline.url, clientAuth),
      );
      up.record(`sync blackline --json (${clientAuth})`, json);
    }
    up.record(
      "validate blackline",
      await cli(["validate", "blackline", "--verbose"], up.blacklineEnv(up.blackline.url, "body")),
    );
    const blacklineAction = await cli(
      ["action", "blackline", "disable_user", "--verbose", "--user-id", "1"],
      up.blacklineEnv(up.blackline.url, "body"),
    );
    expect(JSON.parse(blacklineAction.stdout).error.code).toBe("unsupported");
    up.record("action blackline", blacklineAction);

    const out = join(up.dir, "valimail.sync.jsonl");
    const sync = await cli(
      ["sync", "valimail", "--verbose", "--out", out],
      up.valimailEnv(up.valimail.url),
    );
    expect(sync.code, sync.stderr).toBe(0);
    up.record("sync valimail", sync);
    up.outputs.push({ what: "valimail snapshot", text: await readFile(out, "utf8") });
    const user = [...up.valimail.users.values()][0];
    for (const action of ["disable_user", "enable_user"]) {
      const run = await cli(
        ["action", "valimail", action, "--verbose", "--user-id", user?.id ?? ""],
        up.valimailEnv(up.valimail.url),
      );
      expect(JSON.parse(run.stdout).status).toBe("succeeded");
      up.record(`action valimail ${action}`, run);
    }
    const create = await cli(
      [
        "create-account",
        "valimail",
        "--verbose",
        "--email",
        "grace@example.com",
        "--given-name",
        "Grace",
        "--family-name",
        "Hopper",
      ],
      up.valimailEnv(up.valimail.url),
    );
    up.record("create-account valimail", create);
    up.record(
      "validate valimail",
      await cli(["validate", "valimail", "--verbose"], up.valimailEnv(up.valimail.url)),
    );
  });

  it("an upstream that fails (401, 500) and echoes the request back: every error path", async () => {
    const modes: EchoMode[] = ["token_401", "token_500", "resource_401", "resource_500"];
    for (const mode of modes) {
      for (let item = 0; item < ECHO_ITEMS; item++) {
        up.echo.answer = echoAnswer(mode, item);
        for (const clientAuth of ["body", "basic"] as const) {
          const env = up.blacklineEnv(up.echo.url, clientAuth);
          const sync = await cli(
            ["sync", "blackline", "--verbose", "--out", join(up.dir, "echo-bl.jsonl")],
            env,
          );
          expect(sync.code, `${mode} ${clientAuth}`).not.toBe(0);
          up.record(`sync blackline ${mode} ${item} ${clientAuth}`, sync);
          up.record(
            `validate blackline ${mode} ${item} ${clientAuth}`,
            await cli(["validate", "blackline", "--verbose"], env),
          );
        }
        const env = up.valimailEnv(up.echo.url);
        const sync = await cli(
          ["sync", "valimail", "--verbose", "--out", join(up.dir, "echo-vm.jsonl")],
          env,
        );
        expect(sync.code, mode).not.toBe(0);
        up.record(`sync valimail ${mode} ${item}`, sync);
        const action = await cli(
          ["action", "valimail", "disable_user", "--verbose", "--user-id", "u-1"],
          env,
        );
        expect(JSON.parse(action.stdout).status).toBe("failed");
        up.record(`action valimail ${mode} ${item}`, action);
      }
    }
    // The echo really carried the secrets: the check below would see them if redaction failed.
    expect(
      up.echo.received.some((r) =>
        r.body.includes(encodeURIComponent(SECRETS.blacklineApiKey).replace(/%20/g, "+")),
      ),
    ).toBe(true);
    expect(up.outputs.some((o) => o.text.includes("[REDACTED]"))).toBe(true);
  });

  it("no output holds any form of a secret or token", () => {
    expect(up.leaks()).toEqual([]);
    expect(up.outputs.length).toBeGreaterThan(40);
  });
});
