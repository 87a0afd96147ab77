export * from "./pagingQuirks";
export * from "./server";
