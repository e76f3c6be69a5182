import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, serverUrl } from "../support/database.js";
import { deleteNamespaceStreams, newTestEvents, type TestEvents } from "../support/nats.js";
import { until } from "../support/until.js";
import { freePorts } from "../support/ports.js";
import { watchdog } from "../support/timers.js";

/**
 * The README's examples, run as a newcomer pastes them: the platform started as
 * `npm start` starts it (a child process, free ports, a fresh data folder), then
 * every ```sh block with bash, the ports changed to the platform's. Blocks
 * marked ```sh no-test are not run: only the two that cannot end by themselves
 * or would start a second platform may be.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const README = readFileSync(join(ROOT, "README.md"), "utf8");
/** The ports the README writes, and the blocks that may not run (their first line). */
const README_PORTS = { http: "127.0.0.1:8080", rpc: "127.0.0.1:8081", sites: "localhost:8090" };
const NOT_RUN = ["npm ci && npm start", "node --input-type=module -e '"];

interface Block {
  /** Where the block starts in README.md (1-based), for failure messages. */
  line: number;
  runs: boolean;
  script: string;
}

/** Every fenced ```sh block of a Markdown text; `sh no-test` marks one that is not run. */
function shellBlocks(markdown: string): Block[] {
  const blocks: Block[] = [];
  let open: { line: number; runs: boolean; lines: string[] } | undefined;
  markdown.split("\n").forEach((text, index) => {
    if (open) {
      if (text.trim() === "```") {
        blocks.push({ line: open.line, runs: open.runs, script: open.lines.join("\n") + "\n" });
        open = undefined;
      } else open.lines.push(text);
      return;
    }
    const fence = /^```sh(?:\s+(.*))?$/.exec(text.trim());
    if (fence) open = { line: index + 1, runs: !(fence[1] ?? "").split(/\s+/).includes("no-test"), lines: [] };
  });
  if (open) throw new Error(`README.md: the sh block at line ${open.line} never closes`);
  return blocks;
}

const JWT_LINE = /^[\w-]+\.[\w-]+\.[\w-]+$/gm;

/** What each block promises, found by a command only that block runs. */
const PROMISES: { name: string; runs: string; check(output: string): void }[] = [
  {
    name: "mints a token of each kind and lists the token command's options",
    runs: "--kind app --app-id app_x",
    check(output) {
      expect(output.match(JWT_LINE)).toHaveLength(3);
      expect(output).toContain("usage: npm run -s token -- --kind user|app|service");
    },
  },
  {
    name: "credits 50 coins through the gateway and reads the OpenAPI document",
    runs: "/network/internal/coins/credit",
    check(output) {
      expect(output).toMatch(/"subject":"usr_123","app_id":"app_main","balance":"50"/);
      expect(output).toContain('"openapi":"3.1.0"');
    },
  },
  {
    name: "buys credit: the intent is captured once approved and the balance holds it",
    runs: '"credit":{"pack":"credits_500"}',
    check(output) {
      expect(output).toMatch(/^intent pi_\w+$/m);
      expect(output).toContain('"status":"INTENT_STATUS_SETTLED"');
      expect(output).toMatch(/"subject":"usr_123","balances":\[\{"currency":"USD","spendable_credit":"500"/);
    },
  },
  {
    name: "pays a message by intent: settled on the public page, its alert on the overlay stream",
    runs: "/tips/api/v1/paid-messages",
    check(output) {
      expect(output).toMatch(/^intent pi_\w+$/m);
      expect(output).toMatch(/"messages":\[\{[^\]]*"message":"thanks for the stream"[^\]]*"PAYMENT_STATE_SETTLED"/);
      expect(output).toMatch(/^event: opened$/m);
      expect(output).toMatch(/^event: alert\ndata: \{.*"alert":\{.*"message":"thanks for the stream"/m);
    },
  },
  {
    name: "publishes a site: a tar.gz deploy activated, then served by host name on the sites' listener",
    runs: "/host/api/v1/projects",
    check(output) {
      expect(output).toMatch(/"deploy":\{"id":"dep_\w+".*"state":"DEPLOY_STATE_READY".*"active":true/);
      expect(output).toContain("<h1>Hello from PF hosting</h1>");
    },
  },
  {
    name: "runs a job on the embedded device agent: its output and its end on the stream",
    runs: "/run/api/v1/jobs",
    check(output) {
      expect(output).toMatch(/^event: output\ndata: \{.*"text":"\{\\"text\\":\\"hello\\"\}/m);
      expect(output).toMatch(/"state":"ended","exit":\{"reason":"completed","code":0/);
    },
  },
  {
    name: "runs a seeded AI workflow on the local provider, citing its document, and streams a chat",
    runs: "/ai/api/v1/runs",
    check(output) {
      expect(output).toMatch(/"workflow":"trade.summarize_market_context".*"state":"succeeded".*"stub":true/);
      expect(output).toMatch(/"citations":\[\{"document_id":"src_1"/);
      expect(output).toMatch(/^event: delta$/m);
      expect(output).toMatch(/^event: done\ndata: \{"done":\{.*"state":"succeeded"/m);
    },
  },
  {
    name: "goes live: a test pattern published with the stream's ingest key, its session live",
    runs: "/restream/api/v1/streams",
    check(output) {
      expect(output).toMatch(/"sessions":\[\{"id":"rss_\w+".*"state":"live"/);
    },
  },
  {
    name: "credits 5 more coins over gRPC with buf curl",
    runs: "npx buf curl",
    check(output) {
      expect(output).toMatch(/"balance": "55"/);
    },
  },
];

/** The environment without the caller's own platform settings, which would change what the README shows. */
function cleanEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("PF_") && name !== "LOG_LEVEL"),
  );
}

/** Ends a detached child and everything it started (npx → tsx → node, bash → curl). */
async function stopGroup(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((done) => child.once("exit", done));
  process.kill(-child.pid, signal);
  const cancel = watchdog(15_000, () => child.pid !== undefined && process.kill(-child.pid, "SIGKILL"));
  await exited;
  cancel();
}

/** Runs one block with bash -e; answers its exit code and everything it printed. */
async function runBlock(script: string, env: NodeJS.ProcessEnv, timeoutMs: number) {
  const child = spawn("bash", ["-e", "-c", script], {
    cwd: ROOT,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const cancel = watchdog(timeoutMs, () => void stopGroup(child, "SIGKILL"));
  const code = await new Promise<number | null>((done) => child.once("close", (exitCode) => done(exitCode)));
  cancel();
  return { code, stdout, stderr };
}

describe("README.md", () => {
  const blocks = shellBlocks(README);
  const runnable = blocks.filter((block) => block.runs);

  it("marks only the blocks that cannot run as no-test", () => {
    expect(blocks.filter((block) => !block.runs).map((block) => block.script.split("\n")[0])).toEqual(
      NOT_RUN.map((first) => expect.stringContaining(first)),
    );
  });

  it("says what every runnable block promises: one promise per block", () => {
    const matched = runnable.map((block) => PROMISES.filter((promise) => block.script.includes(promise.runs)).length);
    expect(matched).toEqual(runnable.map(() => 1));
    expect(runnable).toHaveLength(PROMISES.length);
  });

  it("links only to files in the repository, as do the docs", () => {
    const documents = [join(ROOT, "README.md"), ...markdownUnder(join(ROOT, "docs"))];
    expect(documents.length).toBeGreaterThan(3);
    for (const document of documents) {
      const text = readFileSync(document, "utf8");
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target) || target.startsWith("#")) continue;
        const path = resolve(dirname(document), target.split("#")[0]);
        const where = `${relative(ROOT, document)} → ${target}`;
        expect(relative(ROOT, path).startsWith(".."), `${where} leaves the repository`).toBe(false);
        expect(existsSync(path), `${where} names no file`).toBe(true);
      }
    }
  });
});

function markdownUnder(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return readdirSync(folder, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".md"))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe("README.md examples against a platform started as npm start starts it", () => {
  let platform: ChildProcess | undefined;
  let output = "";
  let dataDir = "";
  let ports = { http: 0, rpc: 0, sites: 0 };
  let database: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  let events: TestEvents | undefined;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "pf-readme-"));
    const server = serverUrl();
    // With the machine's servers (CI), a database of its own and a NATS namespace of its own; else the embedded defaults.
    database = server ? await createTestDatabase(server) : undefined;
    events = process.env.NATS_URL ? newTestEvents() : undefined;
    const [http, rpc, sites] = await freePorts(3);
    ports = { http, rpc, sites };
    // The README's own start command (npm start: bundle once, then one node process).
    platform = spawn("npm", ["start"], {
      cwd: ROOT,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...cleanEnvironment(),
        PF_HTTP_PORT: String(http),
        PF_RPC_PORT: String(rpc),
        PF_HOST_SITES_PORT: String(sites),
        // The README reads the ingest URL from the stream: any free port shows the same.
        PF_RESTREAM_RTMP_PORT: "0",
        PF_RESTREAM_PLAYBACK_PORT: "0",
        PF_METRICS_PORT: "0",
        PF_DATA_DIR: dataDir,
        LOG_LEVEL: "warn",
        ...(database ? { DATABASE_URL: database.url } : {}),
        ...(events ? { PF_NATS_NAMESPACE: events.namespace } : {}),
      },
    });
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
    platform.stdout?.on("data", keep);
    platform.stderr?.on("data", keep);
    let exited: string | undefined;
    platform.once("exit", (code, signal) => (exited = code === null ? `on ${signal ?? "a signal"}` : `with ${code}`));
    const ready = async () => {
      if (exited) throw new Error(`npm start exited ${exited}:\n${output}`);
      const answer = await fetch(`http://127.0.0.1:${http}/readyz`).catch(() => undefined);
      return answer?.status === 200;
    };
    await until(ready, 150_000).catch((error: unknown) => {
      throw new Error(`the platform did not get ready: ${(error as Error).message}\n${output}`, { cause: error });
    });
  }, 180_000);

  afterAll(async () => {
    if (platform) await stopGroup(platform);
    if (events && process.env.NATS_URL) await deleteNamespaceStreams(process.env.NATS_URL, events);
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  for (const block of shellBlocks(README).filter((candidate) => candidate.runs)) {
    const promise = PROMISES.find((candidate) => block.script.includes(candidate.runs));
    it(`line ${block.line}: ${promise?.name ?? "a block without a promise"}`, async () => {
      expect(promise, "every runnable block has a promise in this file").toBeDefined();
      const script = block.script
        .replaceAll(README_PORTS.http, `127.0.0.1:${ports.http}`)
        .replaceAll(README_PORTS.rpc, `127.0.0.1:${ports.rpc}`)
        .replaceAll(README_PORTS.sites, `localhost:${ports.sites}`);
      // The token command signs with the platform's dev key, under its data folder.
      const { code, stdout, stderr } = await runBlock(script, { ...cleanEnvironment(), PF_DATA_DIR: dataDir }, 90_000);
      expect(code, `README.md line ${block.line} exited ${code ?? "on a signal"}:\n${stdout}\n${stderr}`).toBe(0);
      promise!.check(stdout);
    }, 120_000);
  }

  // Last, since it stops the platform: a process manager signals npm alone, and npm hands the signal to the script's
  // process. The start script execs node, or sh -c would die by itself and leave the platform running.
  it("stops, its ports released, when npm alone is sent SIGTERM", async () => {
    const npmExited = new Promise((done) => platform!.once("exit", done));
    process.kill(platform!.pid!, "SIGTERM");
    await npmExited;
    const answers = () =>
      fetch(`http://127.0.0.1:${ports.http}/healthz`).then(
        () => true,
        () => false,
      );
    await until(async () => !(await answers()), 20_000);
  }, 60_000);
});
