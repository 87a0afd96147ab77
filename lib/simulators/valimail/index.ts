export * from "./server";
