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
import { sendConditional } from "./instances";

const INFO = "access-connectors shared token v1";
/** GCM's 96-bit nonce, fresh for each seal, and its full 128-bit tag. */
const IV_BYTES = 12;
const TAG_BYTES = 16;
const sealedItem = z.object({ iv: z.string(), sealed: z.string(), tag: z.string() });
const tokenPayload = z.object({ value: z.string().min(1), expiresAt: z.number() });

/** The instance's shared token in `table`, sealed under a key derived from `settings`. */
export function sharedTokens(
  table: string,
  connectorId: string,
  settings: Environment,
): SharedTokens {
  const pk = `token#${connectorId}`;
  // Every setting, in a fixed order: any change of one is another key. HKDF is no password hash:
  // the key is as strong as the settings' secrets, which for every connector include an issued
  // key or client secret (high entropy), never a password alone.
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
      const expiresAt = Math.ceil(token.expiresAt / 1000);
      // A later token kept by another container is not overwritten by an earlier one.
      await sendConditional(
        new PutCommand({
          TableName: table,
          Item: { pk, sk: "token", ...seal(key, pk, token), expiresAt },
          ConditionExpression: "attribute_not_exists(pk) OR expiresAt < :expiresAt",
          ExpressionAttributeValues: { ":expiresAt": expiresAt },
        }),
      );
    },
  };
}

function seal(key: Buffer, pk: string, { value, expiresAt }: AccessToken) {
  const payload = { value, expiresAt };
  const iv = randomBytes(IV_BYTES);
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
  const iv = Buffer.from(item.iv, "base64");
  const tag = Buffer.from(item.tag, "base64");
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES })
      .setAAD(Buffer.from(pk))
      .setAuthTag(tag);
    const text = Buffer.concat([
      decipher.update(Buffer.from(item.sealed, "base64")),
      decipher.final(),
    ]).toString("utf8");
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
