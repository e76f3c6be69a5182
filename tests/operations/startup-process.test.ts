import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp } from "node:fs/promises";
import { createServer, type AddressInfo, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPlatform } from "../../platform/host.js";
import { modules } from "../../platform/registry.js";
import { adminQuery, withDatabase } from "../../services/kit/db/server.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { serverUrl } from "../support/database.js";
import { deleteNamespaceStreams, newTestEvents } from "../support/nats.js";
import { DATABASE_SERVER, describeWith } from "../support/skips.js";
import { until } from "../support/until.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SERVICES = "billing,tips,vip";

/** `npm start`'s entry point in a process of its own, its stdout kept line by line. */
function startMain(env: Record<string, string>) {
  const child = spawn(process.execPath, ["--import", "tsx", "platform/main.ts"], {
    cwd: ROOT,
    env: {
      ...process.env,
      LOG_LEVEL: "info",
      PF_SERVICES: SERVICES,
      PF_HTTP_PORT: "0",
      PF_RPC_PORT: "0",
      PF_METRICS_PORT: "0",
      PF_HOST_SITES_PORT: "0",
      PF_EMBEDDED_AGENT: "0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (chunk: Buffer) => (out.stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (out.stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const lines = () =>
    out.stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    return exited;
  };
  return { out, lines, exited, stop };
}

describeWith(DATABASE_SERVER, "a start that talks", () => {
  const server = serverUrl()!;
  const name = `pf_test_${randomBytes(6).toString("hex")}`;
  const events = process.env.NATS_URL ? newTestEvents() : undefined;
  const env = async () => ({
    // An empty database: every migration is applied by this start.
    DATABASE_URL: withDatabase(server, name),
    PF_DATA_DIR: await mkdtemp(join(tmpdir(), "pf-startup-")),
    ...(events ? { PF_NATS_NAMESPACE: events.namespace } : {}),
  });
  beforeAll(() => adminQuery(server, `create database ${name}`));
  afterAll(async () => {
    await adminQuery(server, `drop database if exists ${name} with (force)`);
    if (events) await deleteNamespaceStreams(process.env.NATS_URL!, events);
  });

  it("says each phase in order, every line naming its process and PF_SERVICES", async () => {
    const main = startMain(await env());
    try {
      await until(
        () => main.lines().some((line) => String(line.msg).startsWith("platform up")) || main.out.stderr !== "",
        60_000,
      );
      expect(main.out.stderr).toBe("");
      const lines = main.lines();
      for (const line of lines) expect(line).toMatchObject({ process: "pf-platform", services: SERVICES });
      const phases = lines.filter((line) => line.phase !== undefined);
      expect(phases.every((line) => line.level === 30)).toBe(true);
      const order = phases.map((line) =>
        line.phase === "migrations" ? `migrations ${String(line.service)}` : String(line.phase),
      );
      // The services open a few at a time: their lines come as each is up.
      expect([...order.slice(0, 2), ...order.slice(2, 5).sort(), ...order.slice(5)]).toEqual([
        "database",
        "nats",
        "migrations billing",
        "migrations tips",
        "migrations vip",
        "workers",
        "ports",
      ]);
      for (const line of phases) expect(line.uptimeMs).toBeGreaterThan(0);
      for (const migrated of phases.filter((line) => line.phase === "migrations")) {
        expect(migrated.migrations).toBeGreaterThan(0);
        expect(migrated.applied).toBe(migrated.migrations);
        expect(migrated.msg).toMatch(/^migrations: \w+ at (\d+) of \1, \1 applied now \(\d+ ms\)$/);
      }
      expect(phases[0].msg).not.toContain("@");
      expect(phases.at(-1)!.msg).toMatch(
        /^ports: gateway http:\/\/127\.0\.0\.1:\d+, RPC http:\/\/127\.0\.0\.1:\d+, metrics /,
      );
    } finally {
      expect(await main.stop()).toBe(0);
    }
  });

  it("a second start on the same database migrates nothing", async () => {
    const settings = await env();
    const migrated: Record<string, unknown>[][] = [];
    for (let round = 0; round < 2; round++) {
      const main = startMain(settings);
      try {
        await until(
          () => main.lines().some((line) => String(line.msg).startsWith("platform up")) || main.out.stderr !== "",
          60_000,
        );
        expect(main.out.stderr).toBe("");
        migrated.push(main.lines().filter((line) => line.phase === "migrations"));
      } finally {
        expect(await main.stop()).toBe(0);
      }
    }
    const counts = (lines: Record<string, unknown>[]) =>
      Object.fromEntries(lines.map((line) => [line.service, line.migrations]));
    expect(Object.keys(counts(migrated[1])).sort()).toEqual(["billing", "tips", "vip"]);
    expect(counts(migrated[1])).toEqual(counts(migrated[0]));
    for (const line of migrated[1]) expect(line.applied).toBe(0);
  }, 120_000);

  describe("a taken port", () => {
    let holder: Server;
    let taken: number;
    beforeAll(async () => {
      holder = createServer();
      await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
      taken = (holder.address() as AddressInfo).port;
    });
    afterAll(() => new Promise((resolve) => holder.close(resolve)));

    it("ends the start with one line naming its setting, before the database, and exits 1", async () => {
      const main = startMain({ ...(await env()), PF_HTTP_PORT: String(taken) });
      expect(await main.exited).toBe(1);
      const lines = main.lines();
      expect(main.out.stderr).toBe("");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: 60, process: "pf-platform", services: SERVICES });
      expect(lines[0].msg).toContain(`PF_HTTP_PORT: port ${taken} on 127.0.0.1 is taken by another process`);
      expect(lines[0].msg).toContain("set PF_HTTP_PORT to a free port");
      expect(lines[0].err).toBeUndefined();
      expect(main.out.stdout).not.toMatch(/\n\s+at /);
    }, 60_000);

    for (const setting of ["PF_RPC_PORT", "PF_METRICS_PORT"])
      it(`on ${setting} is named too`, async () => {
        // No database is reached: the ports are checked first.
        const config = loadConfig({
          PF_HTTP_PORT: "0",
          PF_RPC_PORT: "0",
          PF_METRICS_PORT: "0",
          [setting]: String(taken),
        });
        await expect(startPlatform({ config, modules, logger: createLogger("silent") })).rejects.toThrow(
          `${setting}: port ${taken} on 127.0.0.1 is taken by another process: stop it, or set ${setting} to a free port`,
        );
      });
  });
});
