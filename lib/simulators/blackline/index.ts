export * from "./server";
export * from "./tenant";
