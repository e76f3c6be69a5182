import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Client } from "@connectrpc/connect";
import { afterAll, beforeAll } from "vitest";
import { clientWithDefaults } from "../../services/kit/rpc/clients.js";
import type { DescService } from "@bufbuild/protobuf";
import type { TokenClaims } from "../../services/kit/auth/tokens.js";
import type { Clock } from "../../services/kit/runtime/clock.js";
import type { Logger } from "../../services/kit/runtime/logger.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import { startPlatform, type Platform } from "../../platform/host.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { modules } from "../../platform/registry.js";
import { createTestDatabase, serverUrl } from "./database.js";
import { deleteNamespaceStreams, newTestEvents, type TestEvents } from "./nats.js";

export interface TestPlatform {
  platform: Platform;
  gatewayUrl: string;
  token(claims: TokenClaims): Promise<string>;
  /** A typed client over the in-memory transport (real handlers and interceptors) with this token. */
  client<S extends DescService>(service: S, token?: string): Client<S>;
  /** A JSON request through the gateway over real HTTP. */
  http(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<HttpAnswer>;
  /** This platform's NATS namespace (PF_NATS_NAMESPACE), when NATS_URL is set. */
  events?: TestEvents;
  stop(): Promise<void>;
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  // Test bodies are read field by field.

  body: any;
}

/**
 * The whole platform for one test file: its own database (a copy of the
 * migrated template, or an embedded PostgreSQL), NATS when NATS_URL is set,
 * free ports, a throwaway data directory and quiet logs.
 */
export async function startTestPlatform(
  options: { env?: Record<string, string>; clock?: Clock; services?: string[]; logger?: Logger } = {},
): Promise<TestPlatform> {
  const dataDir = await mkdtemp(join(tmpdir(), "pf-test-"));
  const server = serverUrl();
  // A platform given another's database (a second instance, a restart) makes none of its own.
  const database = server && !options.env?.DATABASE_URL ? await createTestDatabase(server) : undefined;
  const natsUrl = options.env?.NATS_URL ?? process.env.NATS_URL;
  // A namespace passed in is shared with another platform (a restart): its creator deletes it.
  const sharedNamespace = options.env?.PF_NATS_NAMESPACE;
  const events = natsUrl ? newTestEvents(sharedNamespace) : undefined;
  const config = loadConfig({
    PF_HTTP_PORT: "0",
    PF_RPC_PORT: "0",
    PF_METRICS_PORT: "0",
    // The sites' own listener (host): a free port too, so test files running at once never share one.
    PF_HOST_SITES_PORT: "0",
    // Restream's embedded media worker (RTMP ingest, FFmpeg outputs) only where a test asks for it, on free ports.
    PF_RESTREAM_EMBEDDED_WORKER: "off",
    PF_RESTREAM_RTMP_PORT: "0",
    PF_RESTREAM_PLAYBACK_PORT: "0",
    // A slow machine never loses a worker mid-test; liveness tests set their own.
    PF_RESTREAM_WORKER_LOST_MS: "600000",
    PF_DATA_DIR: dataDir,
    PF_DB_POOL: "8",
    LOG_LEVEL: process.env.LOG_LEVEL ?? "silent",
    // Tests drive payments through the test-mode provider, which is off unless chosen.
    PF_BILLING_TEST_PROVIDER: "on",
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...(process.env.NATS_URL ? { NATS_URL: process.env.NATS_URL } : {}),
    ...(events ? { PF_NATS_NAMESPACE: events.namespace } : {}),
    ...(options.services ? { PF_SERVICES: options.services.join(",") } : {}),
    ...options.env,
  });
  const platform = await startPlatform({
    config,
    modules,
    clock: options.clock,
    logger: options.logger ?? createLogger(config.logLevel),
  }).catch(async (error: unknown) => {
    // A start refused part way (a bad setting) may have made streams already.
    if (events && natsUrl && !sharedNamespace) await deleteNamespaceStreams(process.env.NATS_URL || natsUrl, events);
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  });
  const gatewayUrl = platform.gatewayUrl!;
  return {
    platform,
    gatewayUrl,
    events,
    token: (claims) => platform.mintToken(claims),
    client(service, token) {
      return clientWithDefaults(
        service,
        platform.transport,
        token ? { headers: { authorization: `Bearer ${token}` } } : {},
      );
    },
    http: httpAt(gatewayUrl).http,
    async stop() {
      await platform.stop();
      // Through the machine's server itself: a test may have routed the platform through a proxy it cut.
      if (events && natsUrl && !sharedNamespace) await deleteNamespaceStreams(process.env.NATS_URL || natsUrl, events);
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** JSON requests through a gateway at this address (a platform's here, or one in another process). */
export function httpAt(gatewayUrl: string): Pick<TestPlatform, "http"> {
  return {
    async http(method, path, { token, body, headers = {} } = {}) {
      const response = await fetch(gatewayUrl + path, {
        method,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body !== undefined ? { "content-type": "application/json" } : {}),
          ...headers,
        },
        body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text === "" ? undefined : JSON.parse(text) };
    },
  };
}

/**
 * The platform for one test file: started before its tests, stopped after
 * them. The answer stands for the running platform (it forwards to it), so
 * tests and later hooks use it as they would a started one.
 */
export function usePlatform(options: Parameters<typeof startTestPlatform>[0] = {}): TestPlatform {
  let started: TestPlatform | undefined;
  beforeAll(async () => {
    started = await startTestPlatform(options);
  });
  afterAll(() => started?.stop());
  return new Proxy({} as TestPlatform, {
    get(_target, property) {
      if (!started) throw new Error("the test platform is used before it started (outside a test or hook)");
      return Reflect.get(started, property);
    },
  });
}
