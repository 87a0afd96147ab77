export { FIRST_INDEX, SCHEMA, SCIM_MEDIA_TYPE } from "./constants";
export { ScimError, ScimPagingError } from "./errors";
export { and, compare, eq, type FilterValue, not, or } from "./filter";
export { firstListCursor, type ListCursor, listCursor, nextListCursor } from "./paging";
export { type PatchOp, patchOp, type ReplaceOperation, replace } from "./patch";
export { type ListPage, type ListQuery, ScimClient } from "./ScimClient";
