import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readState } from "../../agent/state.js";
import { embeddedAgentWanted } from "../../platform/embedded-agent.js";
import { loadKeys } from "../../services/kit/auth/keys.js";
import { mintToken } from "../../services/kit/auth/tokens.js";
import { loadConfig } from "../../services/kit/runtime/config.js";
import { startChildPlatform, type ChildPlatform } from "../support/child-platform.js";
import { freePorts } from "../support/ports.js";
import { until } from "../support/until.js";

// `npm start`'s entry point on its embedded defaults (no DATABASE_URL, no NATS_URL): it pairs a device agent of its
// own to a platform robot, so a job submitted to run completes with nothing else started (README, "Run a job").
describe("the embedded device agent of `npm start`", () => {
  let env: Record<string, string>;
  let child: ChildPlatform | undefined;
  let token: string;
  beforeAll(async () => {
    const key = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    env = {
      DATABASE_URL: "",
      NATS_URL: "",
      PF_JWT_PRIVATE_KEY: key,
      PF_SERVICES: "bot,run,billing,media",
      PF_HTTP_PORT: String((await freePorts(1))[0]),
      PF_RPC_PORT: "0",
      PF_DATA_DIR: await mkdtemp(join(tmpdir(), "pf-embedded-agent-")),
      // The platform's own line saying its agent paired is an info line.
      LOG_LEVEL: "info",
    };
    const keys = await loadKeys(loadConfig(env));
    token = await mintToken(keys, {
      kind: "app",
      app_id: "app_embedded",
      project_id: "prj_embedded",
      caps: ["run.job.submit", "run.job.read"],
    });
  });
  afterAll(async () => {
    await child?.stop();
    if (env?.PF_DATA_DIR) await rm(env.PF_DATA_DIR, { recursive: true, force: true });
  });

  const statePath = () => join(env.PF_DATA_DIR, "agent", "state.json");
  const call = async (method: string, path: string, body?: unknown) => {
    const answer = await fetch(`${child!.gatewayUrl}/run/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: answer.status, body: (await answer.json()) as any };
  };
  /** Submits echo and waits for its end: the device must have paired and linked first. */
  const echoed = async (text: string) => {
    const job = { class: "function", artifact: "echo", args: { text }, ttl_ms: 60_000, limits: {} };
    const submitted = await call("POST", "/jobs", job);
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
    const id: string = submitted.body.job.id;
    let read: { state: string; [key: string]: any } = submitted.body.job;
    await until(async () => (read = (await call("GET", `/jobs/${id}`)).body.job).state === "ended", 60_000);
    return read;
  };
  /** Whether a process of this machine runs with the agent's state file on its command line: an agent of its own. */
  const agentProcess = async () => {
    for (const pid of (await readdir("/proc")).filter((name) => /^\d+$/.test(name))) {
      const cmdline = await readFile(`/proc/${pid}/cmdline`, "utf8").catch(() => "");
      if (cmdline.includes(statePath())) return true;
    }
    return false;
  };

  it("pairs its agent on start and runs a submitted job to completion on it, in a thread of the platform process", async () => {
    child = await startChildPlatform(env);
    const job = await echoed("hello");
    expect(job.exit).toMatchObject({ reason: "completed", code: 0 });
    expect(job.result.stdout).toBe('{"text":"hello"}\n');
    const state = (await readState(statePath()))!;
    expect(job.placement).toEqual({ device_id: state.device_id, robot_id: state.robot_id });
    // The platform heard its agent's link open (README, "Run a job"): the agent's lines reach it from the thread.
    await until(() => child!.output().includes(`embedded device agent paired: robot ${state.robot_id}`));
    // No second Node process (~40 MB): the agent is a worker thread of the platform's, ending with it.
    expect(await agentProcess()).toBe(false);
    await child.stop();
  }, 150_000);

  it("keeps the same pairing across a restart on the same data folder", async () => {
    const before = (await readState(statePath()))!;
    child = await startChildPlatform(env);
    const job = await echoed("again");
    expect(job.exit).toMatchObject({ reason: "completed" });
    expect(job.placement).toEqual({ device_id: before.device_id, robot_id: before.robot_id });
  }, 150_000);
});

describe("when `npm start` runs an embedded agent", () => {
  const wanted = (env: Record<string, string>) => embeddedAgentWanted(loadConfig(env), env);
  it("runs one with bot and run here, and none when either is not, the gateway is off, PF_EMBEDDED_AGENT=0 or in production", () => {
    expect(wanted({})).toBe(true);
    expect(wanted({ PF_SERVICES: "bot,run" })).toBe(true);
    expect(wanted({ PF_SERVICES: "bot,billing" })).toBe(false);
    expect(wanted({ PF_SERVICES: "run" })).toBe(false);
    expect(wanted({ PF_GATEWAY: "0" })).toBe(false);
    expect(wanted({ PF_EMBEDDED_AGENT: "0" })).toBe(false);
    const production = { DATABASE_URL: "postgres://x", NATS_URL: "nats://x", PF_SEAL_KEY: "s", PF_IP_HASH_KEY: "i" };
    expect(wanted({ ...production, PF_ENV: "production", PF_JWT_PRIVATE_KEY: "k" })).toBe(false);
  });
});
