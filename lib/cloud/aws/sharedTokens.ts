/**
 * The upstream's bearer token shared by an instance's worker containers (docs/cloud.md, "Rate
 * limits across workers"): each container otherwise asks the token endpoint for its own, which
 * at ten containers is ten logins a run, each a request under the upstream's rate limit. One item
 * in the runs table, `pk = token#<connectorId>`, holds the token sealed with AES-256-GCM under a
 * key derived (HKDF-SHA-256) from the instance's settings, which only the functions read from
 * Secrets Manager: whoever can read the table cannot read the token, and a change of settings (a
 * rotated password) makes the item unreadable, as good as absent. The item expires with the token.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import * as z from "zod";
import type { Environment } from "../../config";
import type { AccessToken, SharedTokens } from "../../http";
import { awsClients } from "./clients";

const INFO = "access-connectors shared token v1";
const sealedItem = z.object({ iv: z.string(), sealed: z.string(), tag: z.string() });
const tokenPayload = z.object({ value: z.string().min(1), expiresAt: z.number() });

/** The instance's shared token in `table`, sealed under a key derived from `settings`. */
export function sharedTokens(
  table: string,
  connectorId: string,
  settings: Environment,
): SharedTokens {
  const pk = `token#${connectorId}`;
  // Every setting, in a fixed order: any change of one is another key.
  const material = JSON.stringify(Object.entries(settings).sort(([a], [b]) => (a < b ? -1 : 1)));
  const key = Buffer.from(hkdfSync("sha256", material, connectorId, INFO, 32));
  return {
    async load() {
      const { Item } = await awsClients().dynamo.send(
        new GetCommand({ TableName: table, Key: { pk, sk: "token" }, ConsistentRead: true }),
      );
      const item = sealedItem.safeParse(Item);
      if (!item.success) return undefined;
      const token = tokenPayload.safeParse(open(key, pk, item.data));
      return token.success && token.data.expiresAt > Date.now() ? token.data : undefined;
    },
    async save(token: AccessToken) {
      await awsClients().dynamo.send(
        new PutCommand({
          TableName: table,
          Item: {
            pk,
            sk: "token",
            ...seal(key, pk, { value: token.value, expiresAt: token.expiresAt }),
            expiresAt: Math.ceil(token.expiresAt / 1000),
          },
        }),
      );
    },
  };
}

function seal(key: Buffer, pk: string, payload: AccessToken) {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(Buffer.from(pk));
  const sealed = Buffer.concat([cipher.update(JSON.stringify(payload), "utf8"), cipher.final()]);
  return {
    iv: iv.toString("base64"),
    sealed: sealed.toString("base64"),
    tag: cipher.getAuthTag().toString("base64"),
  };
}

/** The payload, or undefined when it was sealed under another key (other settings) or altered. */
function open(key: Buffer, pk: string, item: z.infer<typeof sealedItem>): unknown {
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(item.iv, "base64"))
      .setAAD(Buffer.from(pk))
      .setAuthTag(Buffer.from(item.tag, "base64"));
    const text = Buffer.concat([
      decipher.update(Buffer.from(item.sealed, "base64")),
      decipher.final(),
    ]).toString("utf8");
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
