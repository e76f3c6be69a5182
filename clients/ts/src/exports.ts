// What both entries (index.ts for Node, browser.ts for browsers) export besides their createPlatformClient.
export type { Caller } from "./headers.js";
export type { PlatformClient, PlatformClientOptions, TransportFactory } from "./platform-client.js";
export { PlatformError, problemOf } from "./problems.js";
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry-policy.js";
export { services, type PlatformServices } from "./services.js";
export { createPlatformFetch, type PlatformFetch, type PlatformFetchOptions } from "./fetch.js";
export type { components, operations, paths } from "./generated/openapi.js";
export type { Problem } from "../../../gen/pf/v1/problem_pb.js";
