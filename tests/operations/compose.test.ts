import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { createTestDatabase, serverUrl } from "../support/database.js";
import { deleteNamespaceStreams, newTestEvents } from "../support/nats.js";
import { freePorts } from "../support/ports.js";
import { BUCKET, TestS3 } from "../media/s3.js";
import { imageEnvironment, imageFolder, ROOT, startInImage, type ImageProcess } from "./image.js";

/**
 * compose.yaml's three platform processes, started as plain processes with exactly the command and environment it
 * declares (over the image's own), against the machine's PostgreSQL and NATS and an S3 server of the test's. Only
 * what one machine forces is changed: compose's host names become 127.0.0.1 and their ports the servers' here,
 * each process's ports are free ones, the database is a fresh one of the test's and the NATS namespace its own
 * (both settings compose leaves to the deployment). Then a few of the README's examples run through the gateway.
 */

interface ComposeService {
  build?: string;
  command?: string[];
  environment?: Record<string, string | number>;
  ports?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
}

/** Compose's interpolation: `${NAME}`, `${NAME:-default}`, `${NAME:?error}` from these variables. */
function interpolate(text: string, variables: Record<string, string>): string {
  return text.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_whole, name: string, kind?: string, rest?: string) => {
    const value = variables[name];
    if (value !== undefined && value !== "") return value;
    if (kind === "?") throw new Error(`compose.yaml: ${name}: ${rest ?? ""}`);
    return kind === "-" ? rest! : "";
  });
}

const keyPem = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
/** The operator's .env for this run: the README's payment examples need the test-mode provider, so not production. */
const VARIABLES = {
  PF_ENV: "development",
  PF_BILLING_TEST_PROVIDER: "on",
  LOG_LEVEL: "warn",
  POSTGRES_PASSWORD: "unused-here",
  PF_JWT_PRIVATE_KEY: keyPem,
  PF_SEAL_KEY: "seal-kept-secret",
  PF_IP_HASH_KEY: "ip-kept-secret",
  S3_ACCESS_KEY: "S3RVER",
  S3_SECRET_KEY: "S3RVER",
  S3_BUCKET: BUCKET,
};

const compose = parse(await readFile(join(ROOT, "compose.yaml"), "utf8"), { merge: true }) as {
  services: Record<string, ComposeService>;
};
const platformServices = Object.entries(compose.services).filter(([, service]) => service.build !== undefined);
/** The ports each process of the image listens on, by the setting that names it. */
const PORT_SETTINGS = [
  "PF_HTTP_PORT",
  "PF_RPC_PORT",
  "PF_METRICS_PORT",
  "PF_HOST_SITES_PORT",
  "PF_RESTREAM_RTMP_PORT",
  "PF_RESTREAM_PLAYBACK_PORT",
];

/** A declared environment, interpolated, over the image's. */
async function declared(service: ComposeService): Promise<Record<string, string>> {
  const own = Object.entries(service.environment ?? {}).map(([name, value]) => [
    name,
    interpolate(String(value), VARIABLES),
  ]);
  return { ...(await imageEnvironment()), ...Object.fromEntries(own) };
}

describe("compose.yaml", () => {
  it("declares PostgreSQL, NATS with JetStream, an S3 store and three platform processes, each with a health check", () => {
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(["postgres", "nats", "s3"]));
    expect(compose.services.nats.command).toContain("--jetstream");
    expect(platformServices.map(([name]) => name)).toEqual(["gateway", "ledger", "workers"]);
    for (const [, service] of platformServices) {
      expect(service.command).toEqual(["node", "dist/main.js"]);
      expect(service.healthcheck?.test.join(" ")).toContain("/readyz");
      expect(Object.keys(service.depends_on ?? {})).toEqual(expect.arrayContaining(["postgres", "nats"]));
    }
    for (const name of ["postgres", "nats", "s3"]) expect(compose.services[name].healthcheck).toBeDefined();
  });

  it("gives every process the same shared settings, and runs each service in exactly one of them", async () => {
    const environments = await Promise.all(platformServices.map(([, service]) => declared(service)));
    for (const shared of [
      "DATABASE_URL",
      "NATS_URL",
      "PF_JWT_PRIVATE_KEY",
      "PF_SEAL_KEY",
      "PF_IP_HASH_KEY",
      "PF_S3_BUCKET",
    ])
      expect(new Set(environments.map((env) => env[shared])).size, shared).toBe(1);
    const services = environments.flatMap((env) => env.PF_SERVICES.split(","));
    // Every service folder (services/kit is the shared runtime), as platform/registry.ts lists them.
    const folders = (await readdir(join(ROOT, "services"), { withFileTypes: true }))
      .filter((entry) => entry.isDirectory() && entry.name !== "kit")
      .map((entry) => entry.name);
    expect([...services].sort()).toEqual(folders.sort());
    // The one public gateway knows where every service it does not run is.
    const [gateway] = environments;
    const elsewhere = services.filter((key) => !gateway.PF_SERVICES.split(",").includes(key));
    for (const key of elsewhere) expect(gateway, key).toHaveProperty(`PF_${key.toUpperCase()}_URL`);
  });
});

describe.skipIf(!serverUrl() || !process.env.NATS_URL)("compose.yaml's processes on this machine", () => {
  let folder: Awaited<ReturnType<typeof imageFolder>>;
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let s3: TestS3;
  const events = newTestEvents();
  const dataDirs: string[] = [];
  const processes = new Map<string, ImageProcess>();
  const ports = new Map<string, Record<string, number>>();

  beforeAll(async () => {
    const [s3Port] = await freePorts(1);
    s3 = new TestS3(s3Port);
    [folder, database] = await Promise.all([imageFolder(), createTestDatabase(serverUrl()!), s3.start()]);
    for (const [name] of platformServices) {
      const free = await freePorts(PORT_SETTINGS.length);
      ports.set(name, Object.fromEntries(PORT_SETTINGS.map((setting, index) => [setting, free[index]])));
    }
    const nats = new URL(process.env.NATS_URL!);
    const db = new URL(database.url);
    /** host:port in a declared URL → where that is on this machine. */
    const hosts = new Map<string, string>([
      ["postgres:5432", db.host],
      ["nats:4222", nats.host],
      ["s3:9000", `127.0.0.1:${s3Port}`],
    ]);
    const imageEnv = await imageEnvironment();
    for (const [name] of platformServices)
      for (const setting of ["PF_HTTP_PORT", "PF_RPC_PORT"])
        hosts.set(`${name}:${imageEnv[setting]}`, `127.0.0.1:${ports.get(name)![setting]}`);
    const started = platformServices.map(async ([name, service]) => {
      const env = await declared(service);
      for (const [setting, value] of Object.entries(env)) {
        const url = /^(\w+:\/\/(?:[^@/]*@)?)([\w.-]+:\d+)(.*)$/s.exec(value);
        if (url && hosts.has(url[2])) env[setting] = `${url[1]}${hosts.get(url[2])!}${url[3]}`;
      }
      env.DATABASE_URL = env.DATABASE_URL.replace(/\/pf$/, db.pathname);
      const dataDir = await mkdtemp(join(tmpdir(), `pf-compose-${name}-`));
      dataDirs.push(dataDir);
      const own = Object.fromEntries(
        Object.entries(ports.get(name)!).map(([setting, port]) => [setting, String(port)]),
      );
      const child = await startInImage(folder.dir, service.command!, {
        ...env,
        ...own,
        PF_DATA_DIR: dataDir,
        PF_NATS_NAMESPACE: events.namespace,
      });
      processes.set(name, child);
    });
    const outcomes = await Promise.allSettled(started);
    const failed = outcomes.find((outcome) => outcome.status === "rejected");
    if (failed) throw failed.reason;
  }, 150_000);

  afterAll(async () => {
    const codes = await Promise.all([...processes.values()].map((child) => child.stop()));
    await Promise.all([
      folder?.remove(),
      database?.drop(),
      s3?.stop(),
      ...dataDirs.map((dir) => rm(dir, { recursive: true, force: true })),
    ]);
    await deleteNamespaceStreams(process.env.NATS_URL!, events);
    expect(codes.every((code) => code === 0)).toBe(true);
  }, 60_000);

  it("has each process ready: its database and NATS answer", async () => {
    for (const [name, child] of processes) {
      const answer = await fetch(`${child.url}/readyz`);
      expect(answer.status, `${name}: ${await answer.text()}`).toBe(200);
    }
  });

  /** A README block: the first ```sh block holding `marker`, pointed at the gateway and the sites' listener. */
  async function readmeBlock(marker: string): Promise<string> {
    const readme = await readFile(join(ROOT, "README.md"), "utf8");
    const block = [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)]
      .map(([, body]) => body)
      .find((body) => body.includes(marker));
    if (!block) throw new Error(`README.md has no sh block with ${marker}`);
    const gateway = ports.get("gateway")!;
    return block
      .replaceAll("127.0.0.1:8080", `127.0.0.1:${gateway.PF_HTTP_PORT}`)
      .replaceAll("localhost:8090", `localhost:${gateway.PF_HOST_SITES_PORT}`);
  }

  /** Runs it as a newcomer pastes it, the token command signing with the deployment's key. */
  async function runReadme(marker: string): Promise<string> {
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("PF_")));
    const { stdout } = await promisify(execFile)("bash", ["-e", "-c", await readmeBlock(marker)], {
      cwd: ROOT,
      env: { ...env, PF_JWT_PRIVATE_KEY: keyPem },
      timeout: 60_000,
    });
    return stdout;
  }

  it("runs the README's coins example through the split's gateway (network, in the gateway's process)", async () => {
    const output = await runReadme("/network/internal/coins/credit");
    expect(output).toMatch(/"subject":"usr_123","app_id":"app_main","balance":"50"/);
    expect(output).toContain('"openapi":"3.1.0"');
  }, 90_000);

  it("runs the README's purchase of credit: billing in the ledger's process, over gRPC", async () => {
    const output = await runReadme('"credit":{"pack":"credits_500"}');
    expect(output).toContain('"status":"INTENT_STATUS_SETTLED"');
    expect(output).toMatch(/"subject":"usr_123","balances":\[\{"currency":"USD","spendable_credit":"500"/);
  }, 90_000);

  it("runs the README's paid message: tips settles from billing's event over NATS, its alert streamed through the gateway", async () => {
    const output = await runReadme("/tips/api/v1/paid-messages");
    expect(output).toMatch(/"messages":\[\{[^\]]*"message":"thanks for the stream"[^\]]*"PAYMENT_STATE_SETTLED"/);
    expect(output).toMatch(/^event: alert\ndata: \{.*"alert":\{.*"message":"thanks for the stream"/m);
  }, 90_000);

  it("runs the README's published site, its files kept in the S3 store", async () => {
    const output = await runReadme("/host/api/v1/projects");
    expect(output).toContain("<h1>Hello from PF hosting</h1>");
    expect((await s3.keys()).length).toBeGreaterThan(0);
  }, 90_000);
});
