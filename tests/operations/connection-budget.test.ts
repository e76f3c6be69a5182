import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { chownSync, existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startPlatform } from "../../platform/host.js";
import { modules } from "../../platform/registry.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { startChildPlatform, type ChildPlatform } from "../support/child-platform.js";
import { deleteNamespaceStreams, newTestEvents } from "../support/nats.js";
import { freePorts } from "../support/ports.js";
import { describeWith, need } from "../support/skips.js";
import { every } from "../support/timers.js";
import { until } from "../support/until.js";

// docs/operations.md, "Connections": a server of the test's own with max_connections = 100 (the shared one is set
// higher for the suite), three whole instances on it, and a start that waits out a server with none to spare.
const VERSION = existsSync("/usr/lib/postgresql") ? readdirSync("/usr/lib/postgresql").sort().at(-1) : undefined;
const BIN = `/usr/lib/postgresql/${VERSION ?? "none"}/bin`;
const POSTGRES = need(VERSION !== undefined && existsSync(`${BIN}/initdb`), "no initdb: PostgreSQL's server binaries");
const MAX_CONNECTIONS = 100;
const SUPERUSER_RESERVED = 3;
/** Connections the test holds itself beside the instances (its pg_stat_activity reader and a margin). */
const TEST_OWN = 4;
/** The default PF_DB_POOL (kit/runtime/config.ts). */
const DEFAULT_POOL = loadConfig({}).dbPoolSize;

let dir: string;
let url: string;
/** The connections a whole process holds apart from its pool, as its start printed them. */
let apart: number | undefined;

/** Runs one of PostgreSQL's programs as the cluster's owner (PostgreSQL refuses to run as root). */
function asOwner(program: string, args: string[]): void {
  const root = userInfo().uid === 0;
  const [command, all] = root
    ? ["runuser", ["-u", "postgres", "--", `${BIN}/${program}`, ...args]]
    : [`${BIN}/${program}`, args];
  execFileSync(command, all, { stdio: "pipe" });
}

/** The client connections the server holds now, the reader's own left out. */
async function connections(reader: pg.Client): Promise<number> {
  const { rows } = await reader.query<{ n: number }>(
    "select count(*)::int as n from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()",
  );
  return rows[0].n;
}

/** Log lines written to memory, to read what a start printed. */
function capturedLogger(): { logger: ReturnType<typeof createLogger>; lines: string[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString().split("\n").filter(Boolean));
      done();
    },
  });
  return { logger: createLogger("info", sink), lines };
}

function inProcessConfig(env: Record<string, string>) {
  return loadConfig({
    DATABASE_URL: url,
    PF_HTTP_PORT: "0",
    PF_RPC_PORT: "0",
    PF_METRICS_PORT: "off",
    PF_HOST_SITES_PORT: "0",
    PF_RESTREAM_EMBEDDED_WORKER: "off",
    PF_DATA_DIR: join(dir, "in-process"),
    ...env,
  });
}

describeWith(POSTGRES, "the connection budget on a server of max_connections = 100", () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "pf-budget-"));
    const data = join(dir, "pg");
    if (userInfo().uid === 0) chownSync(dir, Number(execFileSync("id", ["-u", "postgres"]).toString().trim()), 0);
    asOwner("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
    const [port] = await freePorts(1);
    const options = [
      `-p ${port}`,
      "-c listen_addresses=127.0.0.1",
      `-c unix_socket_directories=${dir}`,
      `-c max_connections=${MAX_CONNECTIONS}`,
      `-c superuser_reserved_connections=${SUPERUSER_RESERVED}`,
      "-c fsync=off",
    ].join(" ");
    asOwner("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "pg.log"), "-w", "start"]);
    url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  }, 60_000);

  afterAll(async () => {
    if (existsSync(join(dir, "pg", "postmaster.pid")))
      asOwner("pg_ctl", ["-D", join(dir, "pg"), "-m", "immediate", "stop"]);
    await rm(dir, { recursive: true, force: true });
  });

  it("refuses to start, naming PF_DB_POOL, a pool the server cannot hold, after printing the budget", async () => {
    const { logger, lines } = capturedLogger();
    const started = startPlatform({ config: inProcessConfig({ PF_DB_POOL: "120" }), modules, logger });
    // One line naming the setting first (platform/main.ts prints such an error without its stack).
    await expect(started).rejects.toThrow(
      /^PF_DB_POOL=120 needs \d+ database connections per process .*\(max_connections 100 less superuser_reserved_connections 3 = 97/,
    );
    const printed = lines
      .map((line) => JSON.parse(line) as { msg: string })
      .map(({ msg }) =>
        /^database connections per process: pool 120 \(PF_DB_POOL\) \+ (\d+) of their own \(.*\) = (\d+)$/.exec(msg),
      )
      .find(Boolean);
    expect(printed, lines.join("\n")).toBeDefined();
    apart = Number(printed![1]);
    expect(Number(printed![2])).toBe(120 + apart);
    // The readiness probe, the migration lock, the outbox wake, the relays.
    expect(apart).toBeGreaterThanOrEqual(3);
  });

  it("waits out a server with no connection to spare at start, saying so, and comes up once one is free", async () => {
    const hogs: pg.Client[] = [];
    // Every connection taken (a superuser's reserved ones too): the start is refused with 53300 until one goes.
    for (;;) {
      const hog = new pg.Client({ connectionString: url });
      const refused = await hog.connect().then(
        () => false,
        (error: { code?: string }) => error.code === "53300",
      );
      if (refused) break;
      hogs.push(hog);
    }
    expect(hogs.length).toBeGreaterThanOrEqual(MAX_CONNECTIONS - SUPERUSER_RESERVED);
    const { logger, lines } = capturedLogger();
    const starting = startPlatform({
      config: inProcessConfig({ PF_SERVICES: "deals", PF_DB_POOL: "2" }),
      modules,
      logger,
    });
    try {
      await until(() => lines.some((line) => line.includes("53300 too many clients")), 20_000);
      await Promise.all(hogs.splice(0).map((hog) => hog.end()));
      const platform = await starting;
      try {
        expect((await platform.readiness()).database).toBe(true);
        const waits = lines.filter((line) => line.includes("no connection to spare"));
        expect(waits.length).toBeGreaterThanOrEqual(1);
        expect(JSON.parse(waits[0])).toMatchObject({ level: 40, code: "53300" });
      } finally {
        await platform.stop();
      }
    } finally {
      await Promise.all(hogs.map((hog) => hog.end()));
      await starting.then((platform) => platform.stop()).catch(() => undefined);
    }
  }, 60_000);

  it("holds three whole instances started at once, each within its printed budget, and each serves under load", async () => {
    // At the default pool, three printed budgets and the test's own fit in the server's 100.
    expect(apart, "the budget printed by the first test").toBeDefined();
    const pool = DEFAULT_POOL;
    const budget = pool + apart!;
    expect(3 * budget + TEST_OWN).toBeLessThanOrEqual(MAX_CONNECTIONS - SUPERUSER_RESERVED);
    const events = newTestEvents();
    const key = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const reader = new pg.Client({ connectionString: url });
    await reader.connect();
    let most = 0;
    // A probe of the server's connections every 100 ms while the instances start and serve.
    const stopWatching = every(100, () => {
      connections(reader).then(
        (n) => (most = Math.max(most, n)),
        () => undefined,
      );
    });
    const children: ChildPlatform[] = [];
    try {
      const ports = await freePorts(3);
      const started = await Promise.allSettled(
        ports.map(async (port, i) =>
          startChildPlatform(
            {
              DATABASE_URL: url,
              NATS_URL: process.env.NATS_URL ?? "",
              PF_NATS_NAMESPACE: events.namespace,
              PF_DB_POOL: String(pool),
              PF_HTTP_PORT: String(port),
              PF_RPC_PORT: "0",
              PF_DATA_DIR: join(dir, `instance-${i}`),
              PF_EMBEDDED_AGENT: "0",
              PF_RESTREAM_EMBEDDED_WORKER: "off",
              PF_JWT_PRIVATE_KEY: key,
              PF_SEAL_KEY: "budget-test-seal",
              PF_IP_HASH_KEY: "budget-test-ip",
            },
            100_000,
          ),
        ),
      );
      for (const outcome of started) if (outcome.status === "fulfilled") children.push(outcome.value);
      for (const outcome of started) if (outcome.status === "rejected") throw outcome.reason;
      for (const child of children) {
        const answer = await fetch(`${child.gatewayUrl}/vip/api/v1/plans`);
        expect(answer.status, await answer.text()).toBe(200);
      }
      // Under load (100 reads at once on each instance) the pools queue their callers; no process opens more.
      const statuses = await Promise.all(
        children.flatMap((child) =>
          Array.from({ length: 100 }, () =>
            fetch(`${child.gatewayUrl}/vip/api/v1/plans`).then(async (answer) => {
              await answer.arrayBuffer();
              return answer.status;
            }),
          ),
        ),
      );
      expect(statuses).toContain(200);
      expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
      most = Math.max(most, await connections(reader));
      expect(most).toBeGreaterThan(0);
      expect(most).toBeLessThanOrEqual(3 * budget);
    } finally {
      stopWatching();
      await Promise.all(children.map((child) => child.stop()));
      await reader.end();
      if (process.env.NATS_URL) await deleteNamespaceStreams(process.env.NATS_URL, events);
    }
  }, 240_000); // three children starting at once (CHILD_START_MS), then the load
});
