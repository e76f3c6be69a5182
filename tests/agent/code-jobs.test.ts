import { spawnSync } from "node:child_process";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ExitReason } from "../../gen/pf/bot/v1/jobs_pb.js";
import { CodeSandbox } from "../../agent/sandbox/code.js";
import type { Ended } from "../../agent/sandbox/running.js";
import { describeWith, need } from "../support/skips.js";
import { jobsUnderTest } from "./support.js";

const hasBubblewrap = spawnSync("bwrap", ["--version"]).status === 0;
/** bubblewrap, which .ci/run installs: the one sandbox `code` jobs run in. */
const BUBBLEWRAP = need(hasBubblewrap, "bubblewrap (bwrap) is not installed");

describe("code jobs on a host without bubblewrap", () => {
  let bin: string;
  beforeAll(async () => {
    // A PATH with prlimit and without bwrap.
    bin = await mkdtemp(join(tmpdir(), "pf-agent-bin-"));
    const prlimit = spawnSync("sh", ["-c", "command -v prlimit"]).stdout.toString().trim();
    await symlink(prlimit, join(bin, "prlimit"));
  });
  afterAll(() => rm(bin, { recursive: true, force: true }));

  it("are not offered, and one sent anyway is refused saying why", async () => {
    vi.stubEnv("PATH", bin);
    const code = await CodeSandbox.detect();
    vi.unstubAllEnvs();
    expect(code).toEqual({ available: false, why: "bubblewrap (bwrap) is not installed" });
    const t = await jobsUnderTest({ code });
    try {
      t.dispatch("job_code", { class: "code", artifact: "echo", args: { text: "x" } });
      const exit = await t.exit("job_code");
      expect(exit.reason).toBe(ExitReason.REFUSED);
      expect(exit.detail).toContain("network denied");
      expect(exit.detail).toContain("bubblewrap (bwrap) is not installed");
      expect(t.kinds("job_code")).toEqual(["ack", "exit"]);
    } finally {
      await t.close();
    }
  });
});

describeWith(BUBBLEWRAP, "code jobs in bubblewrap", () => {
  let sandbox: CodeSandbox;
  let scratch: string;
  let t: Awaited<ReturnType<typeof jobsUnderTest>>;
  beforeAll(async () => {
    const code = await CodeSandbox.detect();
    if (!code.available) throw new Error(`bubblewrap is installed but unusable: ${code.why}`);
    sandbox = code.sandbox;
    scratch = await mkdtemp(join(tmpdir(), "pf-agent-code-"));
    t = await jobsUnderTest({ code });
  });
  afterAll(async () => {
    await t.close();
    await rm(scratch, { recursive: true, force: true });
  });

  /** Runs a script of the test's own in the sandbox, as a code job's is run. */
  async function runScript(script: string, limits = { memoryBytes: 64 << 20, cpuMs: 10_000 }) {
    const dir = await mkdtemp(join(scratch, "job-"));
    const path = join(scratch, `script-${Math.random().toString(36).slice(2)}.sh`);
    await writeFile(path, script);
    let stdout = "";
    const run = sandbox.run({ script: path, stdin: new Uint8Array(), dir, ...limits }, (fd, bytes) => {
      if (fd === 1) stdout += Buffer.from(bytes).toString();
    });
    const ended: Ended = await run.done;
    return { ended, stdout };
  }

  it("run the catalogue's scripts with their args on stdin", async () => {
    t.dispatch("job_code_sum", { class: "code", artifact: "sum", args: { numbers: [40, 2] } });
    t.dispatch("job_code_echo", { class: "code", artifact: "echo", args: { text: "hi" } });
    expect((await t.exit("job_code_sum")).reason).toBe(ExitReason.COMPLETED);
    expect((await t.exit("job_code_echo")).reason).toBe(ExitReason.COMPLETED);
    expect(t.text("job_code_sum")).toBe("42\n");
    expect(t.text("job_code_echo")).toBe('{"text":"hi"}\n');
  });

  it("see no network but a loopback, and none of the host's files but /usr and their working directory", async () => {
    // Beside the agent's working folder, as its state file would be.
    const secret = join(await mkdtemp(join(tmpdir(), "pf-agent-state-")), "state.json");
    await writeFile(secret, "not for jobs");
    const { ended, stdout } = await runScript(
      `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; cat ${secret} 2>/dev/null || echo unreadable; ls /`,
    );
    expect(ended.code).toBe(0);
    const [loopback, credential, ...root] = stdout.trim().split("\n");
    expect(loopback).toBe("lo");
    expect(credential).toBe("unreadable");
    expect(root).not.toContain("home");
    expect(root).not.toContain("root");
    await rm(dirname(secret), { recursive: true });
  });

  it("are killed past their CPU time or resident memory, naming the limit", async () => {
    const busy = await runScript("while :; do :; done", { memoryBytes: 64 << 20, cpuMs: 300 });
    expect(busy.ended).toMatchObject({ signal: "SIGKILL", limit: "cpu_ms" });
    t.dispatch("job_code_hog", {
      class: "code",
      artifact: "hog",
      args: { mib: 100 },
      limits: { memoryBytes: 48n << 20n },
    });
    expect(await t.exit("job_code_hog")).toMatchObject({ reason: ExitReason.LIMIT, limit: "memory_bytes" });
  });

  it("are killed by a job_cancel, and by their ttl", async () => {
    t.dispatch("job_code_cancel", { class: "code", artifact: "sleep", args: { ms: 60_000 } });
    t.dispatch("job_code_ttl", { class: "code", artifact: "sleep", args: { ms: 60_000 }, ttlMs: 500n });
    await t.started("job_code_cancel");
    t.jobs.cancel("job_code_cancel");
    expect(await t.exit("job_code_cancel")).toMatchObject({ reason: ExitReason.CANCELED, signal: "SIGKILL" });
    expect(await t.exit("job_code_ttl")).toMatchObject({ reason: ExitReason.TTL, signal: "SIGKILL" });
  });
});
