import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, serverUrl } from "../support/database.js";
import { deleteNamespaceStreams, newTestEvents } from "../support/nats.js";
import { freePorts } from "../support/ports.js";
import { dockerfileInstructions, imageEnvironment, imageFolder, ROOT, startInImage } from "./image.js";

/**
 * The Dockerfile's rules, read from it (no base image can be pulled here), and the bundle it copies started with
 * plain node from a folder holding only what the image holds, with the image's environment: /healthz answers,
 * SIGTERM drains to exit 0, and the token command and the agent load.
 */

const run = promisify(execFile);
const dockerfile = await readFile(join(ROOT, "Dockerfile"), "utf8");
const instructions = dockerfileInstructions(dockerfile);
const finalStage = Math.max(...instructions.map((instruction) => instruction.stage));
const final = instructions.filter((instruction) => instruction.stage === finalStage);

describe("Dockerfile", () => {
  it("builds in stages from the exact Node LTS release of .nvmrc, slim", async () => {
    const lts = (await readFile(join(ROOT, ".nvmrc"), "utf8")).trim();
    const bases = instructions.filter((instruction) => instruction.keyword === "FROM").map(({ args }) => args);
    expect(bases.length).toBeGreaterThanOrEqual(2);
    for (const base of bases)
      expect(base).toMatch(
        new RegExp(`^node:${lts.replaceAll(".", "\\.")}-slim(@sha256:[0-9a-f]{64})?( AS [\\w-]+)?$`),
      );
  });

  it("runs as an unprivileged user, with a health check on /healthz, plain node on the bundle", () => {
    const user = final.filter((instruction) => instruction.keyword === "USER").at(-1)?.args;
    expect(user).toBeDefined();
    expect(["root", "0", "0:0"]).not.toContain(user);
    const health = final.find((instruction) => instruction.keyword === "HEALTHCHECK")?.args ?? "";
    expect(health).toContain("/healthz");
    expect(final.find((instruction) => instruction.keyword === "CMD")?.args).toBe('["node", "dist/main.js"]');
  });

  it("takes no dev dependency into the final stage: its node_modules come from an `npm ci --omit=dev` stage", () => {
    expect(
      final
        .filter((instruction) => instruction.keyword === "RUN")
        .map(({ args }) => args)
        .join("\n"),
    ).not.toMatch(/npm (ci|install)/);
    const copied = final.find(
      (instruction) => instruction.keyword === "COPY" && instruction.args.includes("node_modules"),
    );
    const from = /--from=([\w-]+)/.exec(copied?.args ?? "")?.[1];
    const stage = instructions.find(
      (instruction) => instruction.keyword === "FROM" && instruction.args.endsWith(` AS ${from ?? "(none)"}`),
    );
    expect(stage).toBeDefined();
    const its = instructions.filter(
      (instruction) => instruction.stage === stage!.stage && instruction.keyword === "RUN",
    );
    expect(its.map(({ args }) => args).join("\n")).toMatch(/npm ci .*--omit=dev/);
    // Everything else the final stage copies from the build is the bundle and the manifest.
    const others = final.filter((instruction) => instruction.keyword === "COPY" && instruction !== copied);
    expect(others.map(({ args }) => args.split(/\s+/).filter((word) => !word.startsWith("--"))[0])).toEqual([
      "/app/dist",
      "package.json",
    ]);
  });

  it("keeps the data folder the only place it writes, outside the read-only root", async () => {
    const env = await imageEnvironment();
    expect(env.PF_DATA_DIR).toMatch(/^\/var\//);
    expect(final.find((instruction) => instruction.keyword === "VOLUME")?.args).toBe(env.PF_DATA_DIR);
    expect(env.PF_BIND).toBe("0.0.0.0");
  });
});

describe.skipIf(!serverUrl() || !process.env.NATS_URL)("the image's folder, started with plain node", () => {
  let folder: Awaited<ReturnType<typeof imageFolder>>;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  const events = newTestEvents();
  let dataDir = "";
  const privateKey = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();

  beforeAll(async () => {
    [folder, database, dataDir] = await Promise.all([
      imageFolder(),
      createTestDatabase(serverUrl()!),
      mkdtemp(join(tmpdir(), "pf-image-data-")),
    ]);
  }, 120_000);

  afterAll(async () => {
    await folder?.remove();
    await database?.drop();
    await deleteNamespaceStreams(process.env.NATS_URL!, events);
    await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("holds no build tool: neither esbuild nor tsx nor typescript is in its node_modules", async () => {
    for (const tool of ["esbuild", "tsx", "typescript", "vitest"])
      await expect(readFile(join(folder.dir, "node_modules", tool, "package.json"))).rejects.toThrow();
  });

  it("serves /healthz in production and drains on SIGTERM, exit 0", async () => {
    const [http, rpc, metrics, sites, rtmp, playback] = await freePorts(6);
    const platform = await startInImage(folder.dir, ["node", "dist/main.js"], {
      ...(await imageEnvironment()),
      PF_ENV: "production",
      PF_BIND: "127.0.0.1",
      PF_DATA_DIR: dataDir,
      DATABASE_URL: database.url,
      NATS_URL: process.env.NATS_URL!,
      PF_NATS_NAMESPACE: events.namespace,
      PF_JWT_PRIVATE_KEY: privateKey,
      PF_SEAL_KEY: "seal-kept-secret",
      PF_IP_HASH_KEY: "ip-kept-secret",
      PF_HTTP_PORT: String(http),
      PF_RPC_PORT: String(rpc),
      PF_METRICS_PORT: String(metrics),
      PF_HOST_SITES_PORT: String(sites),
      PF_RESTREAM_RTMP_PORT: String(rtmp),
      PF_RESTREAM_PLAYBACK_PORT: String(playback),
      LOG_LEVEL: "warn",
    });
    try {
      const ready = await fetch(`${platform.url}/readyz`);
      expect(ready.status).toBe(200);
      // The token command of the image signs with the same key.
      const { stdout } = await run(process.execPath, ["dist/token.js", "--kind", "user", "--sub", "usr_123"], {
        cwd: folder.dir,
        env: { PATH: process.env.PATH, PF_JWT_PRIVATE_KEY: privateKey, PF_DATA_DIR: dataDir },
      });
      const token = stdout.trim();
      expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
      const me = await fetch(`${platform.url}/openapi.json`, { headers: { authorization: `Bearer ${token}` } });
      expect(me.status).toBe(200);
    } finally {
      expect(await platform.stop(), platform.output()).toBe(0);
    }
  }, 150_000);

  it("loads the agent's bundle: a wrong flag answers its usage, exit 64", async () => {
    const failed = await run(process.execPath, ["dist/agent.js", "--no-such-flag"], { cwd: folder.dir }).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed).toMatchObject({ code: 64, stderr: expect.stringContaining("usage: npm run agent") });
  });
});
