export { FIRST_INDEX, SCHEMA, SCIM_MEDIA_TYPE } from "./constants";
export { ScimError } from "./errors";
export { and, compare, eq, type FilterValue, ne, not, or } from "./filter";
export { type PatchOp, patchOp, type ReplaceOperation, replace } from "./patch";
export { type ListPage, type ListQuery, ScimClient } from "./ScimClient";
