import { SCHEMA } from "./constants";

/**
 * A PatchOp body (RFC 7644 section 3.5.2). Only `replace` is built: it is the one operation every
 * provider this project talks to accepts, and it is idempotent, so a retried PATCH is safe.
 */
export interface ReplaceOperation {
  op: "replace";
  path: string;
  value: unknown;
}

export interface PatchOp {
  schemas: [typeof SCHEMA.patchOp];
  Operations: ReplaceOperation[];
}

export function replace(path: string, value: unknown): ReplaceOperation {
  return { op: "replace", path, value };
}

export function patchOp(...operations: ReplaceOperation[]): PatchOp {
  return { schemas: [SCHEMA.patchOp], Operations: operations };
}
