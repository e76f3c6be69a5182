import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { startChildPlatform } from "./child-platform.js";
import { startTestPlatform, type TestPlatform } from "./platform.js";
import { freePorts } from "./ports.js";
import { need } from "./skips.js";
import { TcpProxy } from "./tcp-proxy.js";

/** A process of its own shares the service's database and NATS server. */
export const SERVERS = need(
  Boolean(process.env.DATABASE_URL && process.env.NATS_URL),
  "a child process shares the database and NATS: DATABASE_URL and NATS_URL",
);

/** A service in a platform of its own, reaching the services it calls in another over gRPC, each through a proxy. */
export interface Beside {
  /** The service's platform: after `killedAfter`, the one that took over. */
  service: TestPlatform;
  /** The platform running the callees (and what they need alongside). */
  callees: TestPlatform;
  /** Makes these callees unreachable (connections refused) or reachable again. */
  reachable(callees: string[], up: boolean): Promise<void>;
  /**
   * Runs `work` against the service in a process of its own (the platform here stops first), on the same database and
   * NATS namespace, then kills that process (SIGKILL: nothing flushed) and starts a platform here in its place.
   */
  killedAfter(work: (gatewayUrl: string) => Promise<void>): Promise<void>;
}

/**
 * The platforms of one test file (started before its tests, stopped after them): `callees` and `alongside` in one
 * platform, `service` in another reaching each callee through a TCP proxy the test cuts, so the callee really stops
 * answering (tests/search/owners.test.ts, tests/community/forum.test.ts). Calls give up after 2 s; the search
 * relay polls every 50 ms, pausing at most 1 s, and the reconciliation does not run.
 */
export function useBeside(
  service: string,
  { callees, alongside = [], env: own = {} }: { callees: string[]; alongside?: string[]; env?: Record<string, string> },
): Beside {
  const key = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const proxies = new Map<string, TcpProxy>();
  const cut = new Set<string>();
  const platforms: TestPlatform[] = [];
  let others: TestPlatform | undefined;
  let env: Record<string, string> = {};
  beforeAll(async () => {
    others = await startTestPlatform({
      services: [...callees, ...alongside],
      // Tests ask search anonymously, often.
      env: { NATS_URL: "", PF_JWT_PRIVATE_KEY: key, PF_SEARCH_ANONYMOUS_PER_MINUTE: "100000" },
    });
    const rpc = new URL(others.platform.rpcUrl);
    for (const callee of callees) {
      const proxy = new TcpProxy(rpc.hostname, Number(rpc.port));
      await proxy.open();
      proxies.set(callee, proxy);
      env[`PF_${callee.toUpperCase()}_URL`] = `http://127.0.0.1:${proxy.port}`;
    }
    env = {
      ...own,
      ...env,
      PF_JWT_PRIVATE_KEY: key,
      PF_CALL_TIMEOUT_MS: "2000",
      PF_SEARCH_RELAY_POLL_MS: "50",
      PF_SEARCH_RELAY_MAX_BACKOFF_MS: "1000",
      // No reconciliation within a test: what reaches search, the write's own record carried.
      PF_SEARCH_RECONCILE_FIRST_MS: "3600000",
    };
    platforms.push(await startTestPlatform({ services: [service], env }));
  }, 120_000);
  afterAll(async () => {
    // The first platform made the database and the namespace: it stops last.
    for (const platform of platforms.reverse()) await platform.stop();
    for (const proxy of proxies.values()) await proxy.cut();
    await others?.stop();
  });
  const started = (platform: TestPlatform | undefined) => {
    if (!platform) throw new Error("the platforms are used before they started (outside a test or hook)");
    return platform;
  };
  const forward = (current: () => TestPlatform | undefined) =>
    new Proxy({} as TestPlatform, { get: (_target, property) => Reflect.get(started(current()), property) });
  return {
    service: forward(() => platforms.at(-1)),
    callees: forward(() => others),
    async reachable(names, up) {
      for (const name of names) {
        // Already so: an open proxy opened again would not listen.
        if (up !== cut.has(name)) continue;
        const proxy = proxies.get(name)!;
        if (up) {
          await proxy.open();
          cut.delete(name);
        } else {
          await proxy.cut();
          cut.add(name);
        }
      }
    },
    async killedAfter(work) {
      const here = started(platforms.at(-1));
      await here.platform.stop();
      const shared = { DATABASE_URL: here.platform.databaseUrl, PF_NATS_NAMESPACE: here.events!.namespace };
      const dataDir = await mkdtemp(join(tmpdir(), `pf-${service}-`));
      try {
        const child = await startChildPlatform({
          ...env,
          ...shared,
          PF_SERVICES: service,
          PF_HTTP_PORT: String((await freePorts(1))[0]),
          PF_RPC_PORT: "0",
          PF_DATA_DIR: dataDir,
        });
        try {
          await work(child.gatewayUrl);
        } finally {
          await child.kill();
        }
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
      platforms.push(await startTestPlatform({ services: [service], env: { ...env, ...shared } }));
    },
  };
}
