import { resolve } from "node:path";
import { wholeSetting } from "./whole-setting.js";

/** Every setting of a process, read once from the environment (names in README). */
export interface Config {
  /** Gateway HTTP port (PF_HTTP_PORT, default 8080; 0 picks a free one). */
  httpPort: number;
  /** RPC port: gRPC, gRPC-Web and Connect on HTTP/2 cleartext (PF_RPC_PORT, default 8081). */
  rpcPort: number;
  /**
   * Port of `GET /metrics`, Prometheus's text format, apart from the public gateway
   * (PF_METRICS_PORT, default 9464; 0 picks a free one; `off` serves none and counts nothing).
   */
  metricsPort?: number;
  /** Interface the ports bind to (PF_BIND, default 127.0.0.1). */
  bind: string;
  /** Where local data lives: embedded database, dev keys, blobs (PF_DATA_DIR, default .data). */
  dataDir: string;
  /** PostgreSQL; unset runs the embedded PGlite (DATABASE_URL). */
  databaseUrl?: string;
  /** Connections of the process's one database pool, shared by its services (PF_DB_POOL, default 20). */
  dbPoolSize: number;
  /** Connections of the pool one service holds at once; its other transactions wait their turn (PF_DB_SERVICE_CONNECTIONS, default 4). */
  dbServiceConnections: number;
  /** How long a call waits for a free database connection before it is answered 503 (PF_DB_ACQUIRE_TIMEOUT_MS, default 5000). */
  dbAcquireTimeoutMs: number;
  /** How often each outbox relay looks for events it was not woken for (PF_OUTBOX_POLL_MS, default 500). */
  outboxPollMs: number;
  /** NATS with JetStream; unset keeps events in process (NATS_URL). */
  natsUrl?: string;
  /**
   * Deployments sharing one NATS server keep apart by a namespace: subjects
   * travel as `<namespace>.<subject>`, streams are `PF_<NAMESPACE>_<PREFIX>`
   * (PF_NATS_NAMESPACE; unset: the spec's subjects as they are).
   */
  natsNamespace?: string;
  /** Services this process runs (PF_SERVICES, comma separated); unset runs all. */
  services?: string[];
  /** Serve the HTTP gateway in this process (PF_GATEWAY, default on; "0" turns it off). */
  gateway: boolean;
  /** pino level (LOG_LEVEL, default info). */
  logLevel: string;
  /** Ed25519 private key as a JWK or PKCS#8 PEM (PF_JWT_PRIVATE_KEY). */
  jwtPrivateKey?: string;
  /** JWKS of the keys tokens may be signed with (PF_JWT_PUBLIC_KEYS). */
  jwtPublicKeys?: string;
  /** Host name to service key, `tips.example=tips,…` (PF_HOST_ROUTING). */
  hostRouting: Record<string, string>;
  /** Remote services by key, from PF_<SERVICE>_URL. */
  serviceUrls: Record<string, string>;
  /** Origins allowed by CORS besides the platform's own (PF_CORS_ORIGINS, comma separated). */
  corsOrigins: string[];
  /** Largest accepted request body in bytes (PF_BODY_LIMIT, default 1 MiB). */
  bodyLimit: number;
  /** Deadline of calls between services in ms (PF_CALL_TIMEOUT_MS, default 10000). */
  callTimeoutMs: number;
  /** How long a caller may take to send a request (headers and body) on either port. */
  bodyTimeoutMs: number;
  /** The slowest average, in bytes a second, a streamed upload's body may arrive at after `bodyTimeoutMs` (PF_UPLOAD_MIN_RATE). */
  uploadMinRate: number;
  /** How often the gateway pings each open WebSocket; one that sent nothing since the last ping is cut (PF_WS_PING_MS). */
  webSocketPingMs: number;
  /**
   * A production deployment (PF_ENV=production; unset or `development` is not):
   * settings only fit for local use (test-mode payments) refuse to start there.
   */
  production: boolean;
  /** The raw environment, for a service's own documented settings. */
  env: Record<string, string | undefined>;
}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const list = (value: string | undefined) =>
    (value ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== "");
  const serviceUrls: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    const match = /^PF_([A-Z]+)_URL$/.exec(name);
    if (match && value) serviceUrls[match[1].toLowerCase()] = value;
  }
  const hostRouting: Record<string, string> = {};
  for (const pair of list(env.PF_HOST_ROUTING)) {
    const [host, service] = pair.split("=");
    if (host && service) hostRouting[host.toLowerCase()] = service;
  }
  const services = list(env.PF_SERVICES);
  return {
    httpPort: integer(env.PF_HTTP_PORT, 8080),
    rpcPort: integer(env.PF_RPC_PORT, 8081),
    metricsPort: env.PF_METRICS_PORT === "off" ? undefined : integer(env.PF_METRICS_PORT, 9464),
    bind: env.PF_BIND ?? "127.0.0.1",
    dataDir: resolve(env.PF_DATA_DIR ?? ".data"),
    databaseUrl: env.DATABASE_URL || undefined,
    dbPoolSize: wholeSetting(env, "PF_DB_POOL", 20, 1),
    dbServiceConnections: wholeSetting(env, "PF_DB_SERVICE_CONNECTIONS", 4, 1),
    dbAcquireTimeoutMs: integer(env.PF_DB_ACQUIRE_TIMEOUT_MS, 5_000),
    outboxPollMs: integer(env.PF_OUTBOX_POLL_MS, 500),
    natsUrl: env.NATS_URL || undefined,
    natsNamespace: namespace(env.PF_NATS_NAMESPACE),
    services: services.length > 0 ? services : undefined,
    gateway: env.PF_GATEWAY !== "0",
    logLevel: env.LOG_LEVEL ?? "info",
    jwtPrivateKey: env.PF_JWT_PRIVATE_KEY || undefined,
    jwtPublicKeys: env.PF_JWT_PUBLIC_KEYS || undefined,
    hostRouting,
    serviceUrls,
    corsOrigins: list(env.PF_CORS_ORIGINS),
    bodyLimit: integer(env.PF_BODY_LIMIT, 1024 * 1024),
    callTimeoutMs: integer(env.PF_CALL_TIMEOUT_MS, 10_000),
    bodyTimeoutMs: integer(env.PF_BODY_TIMEOUT_MS, 30_000),
    uploadMinRate: wholeSetting(env, "PF_UPLOAD_MIN_RATE", 4096, 1),
    webSocketPingMs: wholeSetting(env, "PF_WS_PING_MS", 25_000, 1),
    production: production(env),
    env,
  };
}

/**
 * What production must set: nothing there may fall back to what is made up
 * for local use (the embedded database, the in-process bus, keys made on first
 * start under the data directory, which instances would not share).
 */
export const PRODUCTION_SETTINGS = ["DATABASE_URL", "NATS_URL", "PF_JWT_PRIVATE_KEY", "PF_SEAL_KEY", "PF_IP_HASH_KEY"];

function production(env: NodeJS.ProcessEnv): boolean {
  const value = env.PF_ENV;
  // A misspelt environment must not quietly run as development.
  if (value !== undefined && !["", "development", "production"].includes(value))
    throw new Error(`PF_ENV: expected production or development, got ${JSON.stringify(value)}`);
  if (value !== "production") return false;
  const missing = PRODUCTION_SETTINGS.filter((name) => !env[name]);
  if (missing.length > 0)
    throw new Error(`PF_ENV=production needs ${missing.join(", ")} set (README, "In production").`);
  return true;
}

function namespace(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return undefined;
  if (!/^[a-z0-9_-]{1,32}$/.test(value))
    throw new Error(`PF_NATS_NAMESPACE: expected 1 to 32 of a-z 0-9 _ -, got ${JSON.stringify(value)}`);
  return value;
}

function integer(value: string | undefined, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0) throw new Error(`expected a whole number, got ${JSON.stringify(value)}`);
  return parsed;
}
