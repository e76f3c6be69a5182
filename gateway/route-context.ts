import type { Registry } from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import type { Admission } from "../services/kit/auth/enforce.js";
import type { Logger } from "../services/kit/runtime/logger.js";

/**
 * What admits a request, and tells who may read the whole OpenAPI document:
 * the services' enforcement (tests of the mapping alone may admit everyone).
 */
export type Admitting = Pick<Admission, "admit" | "discoversInternals">;

/** What a binding's route calls through, fixed at build time. */
export interface RouteContext {
  readonly transport: Transport;
  /** Admits each request before the gateway reads it (401 before any shape check). */
  readonly admission: Admitting;
  /** The deadline of every unary call; event streams have none (they last until the RPC or the client ends them). */
  readonly timeoutMs: number;
  /** The deadline of an upload's RPC (uploads.ts; default an hour): a large file takes a while. */
  readonly uploadTimeoutMs?: number;
  /** How long an upload's body may go without a byte arriving (default 30 s), and its grace before `uploadMinRate`. */
  readonly bodyTimeoutMs?: number;
  /** The slowest average an upload's body may arrive at, in bytes a second (default 4096). */
  readonly uploadMinRate?: number;
  /** The largest JSON body, in bytes (PF_BODY_LIMIT; default 1 MiB, Fastify's): an upload route's JSON body too. */
  readonly bodyLimit?: number;
  /** Types for Any and extensions in JSON. */
  readonly registry: Registry;
  readonly logger: Logger;
  /** How often an open event stream gets a keep-alive comment (default 15 s). */
  readonly heartbeatMs?: number;
  /** How often an open WebSocket is pinged; one that sent nothing since the last ping is cut (default 25 s). */
  readonly webSocketPingMs?: number;
  /** The event streams and WebSocket calls being served, ended when the gateway closes (they never end on their own). */
  readonly openStreams?: Set<AbortController>;
}
