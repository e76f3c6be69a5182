import { readdirSync, readlinkSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitReason } from "../../gen/pf/bot/v1/jobs_pb.js";
import { OutputStream } from "../../gen/pf/bot/v1/link_pb.js";
import { ESTOP_LATCHED } from "../../agent/jobs.js";
import { FunctionSandbox } from "../../agent/sandbox/function.js";
import { jobsUnderTest } from "./support.js";
import { until } from "../support/until.js";

// Function jobs through the agent's job runner: real WASI modules in real worker threads, frames kept in a list.
describe("function jobs", () => {
  let t: Awaited<ReturnType<typeof jobsUnderTest>>;
  beforeAll(async () => (t = await jobsUnderTest()));
  afterAll(() => t.close());

  it("are acknowledged on receipt, then started, their stdout streamed and their exit completed", async () => {
    t.dispatch("job_echo", { class: "function", artifact: "echo", args: { text: "héllo" } });
    // The ack goes out before anything else happens (ttl counts from receipt).
    expect(t.kinds("job_echo")).toEqual(["ack"]);
    const exit = await t.exit("job_echo");
    expect(exit).toMatchObject({ reason: ExitReason.COMPLETED, code: 0, signal: "" });
    expect(t.text("job_echo")).toBe('{"text":"héllo"}\n');
    const kinds = t.kinds("job_echo");
    expect(kinds[0]).toBe("ack");
    expect(kinds[1]).toBe("started");
    expect(kinds.at(-1)).toBe("exit");
    // Its working directory is removed once the job has ended (after its exit went out).
    await until(async () => (await t.leftovers()).length === 0);
  });

  it("get their args as canonical JSON on stdin, so the module reads them in a known order", async () => {
    t.dispatch("job_sum", { class: "function", artifact: "sum", args: { numbers: [1, 2, -5, 1_000_000_000_000] } });
    expect((await t.exit("job_sum")).reason).toBe(ExitReason.COMPLETED);
    expect(t.text("job_sum")).toBe("999999999998\n");
    t.dispatch("job_printer", { class: "function", artifact: "printer", args: { pause_ms: 1, lines: 2 } });
    expect((await t.exit("job_printer")).reason).toBe(ExitReason.COMPLETED);
    expect(t.text("job_printer", OutputStream.STDOUT)).toBe("line 1\nline 2\n");
  });

  it("stream stdout and stderr numbered from 1 across both", async () => {
    t.dispatch("job_streams", { class: "function", artifact: "printer", args: { lines: 3 } });
    await t.exit("job_streams");
    expect(t.text("job_streams", OutputStream.STDERR)).toBe("printed 3 lines\n");
    const seqs = t.frames.flatMap((frame) =>
      frame.frame.case === "output" && frame.frame.value.jobId === "job_streams" ? [Number(frame.frame.value.seq)] : [],
    );
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });

  it("are killed when their ttl runs out while running: exit ttl, SIGKILL", async () => {
    t.dispatch("job_ttl", { class: "function", artifact: "sleep", args: { ms: 60_000 }, ttlMs: 300n });
    await t.started("job_ttl");
    expect(await t.exit("job_ttl")).toMatchObject({ reason: ExitReason.TTL, signal: "SIGKILL" });
    expect(t.text("job_ttl")).toBe("");
  });

  it("are killed past output_bytes, naming the limit, and send no more than the cap", async () => {
    t.dispatch("job_chatty", {
      class: "function",
      artifact: "printer",
      args: { lines: 1_000_000 },
      limits: { outputBytes: 1000n },
    });
    expect(await t.exit("job_chatty")).toMatchObject({ reason: ExitReason.LIMIT, limit: "output_bytes" });
    const text = t.text("job_chatty");
    expect(Buffer.byteLength(text)).toBe(1000);
    expect(text.startsWith("line 1\nline 2\n")).toBe(true);
  });

  it("are refused before they start when the module's memory maximum exceeds memory_bytes", async () => {
    // The hog declares a 256 MiB maximum.
    t.dispatch("job_hog_refused", {
      class: "function",
      artifact: "hog",
      args: { mib: 1 },
      limits: { memoryBytes: 64n * 1024n * 1024n },
    });
    const exit = await t.exit("job_hog_refused");
    expect(exit).toMatchObject({ reason: ExitReason.REFUSED, limit: "memory_bytes" });
    expect(exit.detail).toContain("memory maximum");
    expect(t.kinds("job_hog_refused")).toEqual(["ack", "exit"]);
  });

  it("run a module whose memory maximum is within the limit, growing its memory", async () => {
    t.dispatch("job_hog", { class: "function", artifact: "hog", args: { mib: 8 } });
    expect((await t.exit("job_hog")).reason).toBe(ExitReason.COMPLETED);
    expect(t.text("job_hog")).toBe("held 8 MiB\n");
  });

  it("are refused when the args do not match the artifact's declared input, or the class or artifact is unknown", async () => {
    t.dispatch("job_bad_args", { class: "function", artifact: "sum", args: { numbers: "1,2" } });
    t.dispatch("job_bad_class", { class: "quantum", artifact: "sum", args: { numbers: [] } });
    t.dispatch("job_bad_artifact", { class: "function", artifact: "rm", args: {} });
    expect(await t.exit("job_bad_args")).toMatchObject({ reason: ExitReason.REFUSED });
    expect((await t.exit("job_bad_args")).detail).toContain("/numbers");
    expect((await t.exit("job_bad_class")).detail).toContain('class "quantum"');
    expect((await t.exit("job_bad_artifact")).detail).toContain('artifact "rm"');
    for (const id of ["job_bad_args", "job_bad_class", "job_bad_artifact"])
      expect(t.kinds(id)).toEqual(["ack", "exit"]);
  });

  it("answer a job frame sent again with its ack and the same exit, never a second run", async () => {
    t.dispatch("job_twice", { class: "function", artifact: "echo", args: { text: "once" } });
    const exit = await t.exit("job_twice");
    t.dispatch("job_twice", { class: "function", artifact: "echo", args: { text: "once" } });
    const kinds = t.kinds("job_twice");
    expect(kinds.filter((kind) => kind === "started")).toHaveLength(1);
    expect(kinds.slice(-2)).toEqual(["ack", "exit"]);
    const exits = t.frames.filter((frame) => frame.frame.case === "exit" && frame.frame.value.jobId === "job_twice");
    expect(exits[1]).toBe(exits[0]);
    expect(exit.reason).toBe(ExitReason.COMPLETED);
  });

  it("leave no file descriptor open on their working directories, killed or not", async () => {
    for (let i = 0; i < 3; i++) {
      t.dispatch(`job_fd_${i}`, { class: "function", artifact: "sleep", args: { ms: 60_000 } });
      await t.started(`job_fd_${i}`);
      t.jobs.cancel(`job_fd_${i}`);
      expect((await t.exit(`job_fd_${i}`)).reason).toBe(ExitReason.CANCELED);
    }
    const open = readdirSync("/proc/self/fd").filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`).startsWith(t.workRoot);
      } catch {
        return false;
      }
    });
    expect(open).toEqual([]);
  });
});

describe("waiting for a slot", () => {
  let t: Awaited<ReturnType<typeof jobsUnderTest>>;
  beforeAll(async () => (t = await jobsUnderTest({ caps: { slots: 1, maxTtlMs: 60_000 } })));
  afterAll(() => t.close());

  it("a job cancelled while it waits never starts; a running one is killed", async () => {
    t.dispatch("job_busy", { class: "function", artifact: "sleep", args: { ms: 60_000 } });
    await t.started("job_busy");
    t.dispatch("job_waiting", { class: "function", artifact: "echo", args: { text: "never" } });
    t.jobs.cancel("job_waiting");
    expect(await t.exit("job_waiting")).toMatchObject({ reason: ExitReason.CANCELED, signal: "" });
    expect(t.kinds("job_waiting")).toEqual(["ack", "exit"]);
    t.jobs.cancel("job_busy");
    expect(await t.exit("job_busy")).toMatchObject({ reason: ExitReason.CANCELED, signal: "SIGKILL" });
  });

  it("a job whose ttl runs out while it waits never starts: exit ttl", async () => {
    t.dispatch("job_hold", { class: "function", artifact: "sleep", args: { ms: 60_000 } });
    await t.started("job_hold");
    t.dispatch("job_late", { class: "function", artifact: "echo", args: { text: "late" }, ttlMs: 200n });
    expect(await t.exit("job_late")).toMatchObject({ reason: ExitReason.TTL, signal: "" });
    expect(t.kinds("job_late")).toEqual(["ack", "exit"]);
    t.jobs.cancel("job_hold");
    await t.exit("job_hold");
  });
});

describe("the device's own caps", () => {
  let t: Awaited<ReturnType<typeof jobsUnderTest>>;
  beforeAll(async () => (t = await jobsUnderTest({ caps: { maxTtlMs: 300 } })));
  afterAll(() => t.close());

  it("win over a job's looser ttl", async () => {
    t.dispatch("job_long", { class: "function", artifact: "sleep", args: { ms: 60_000 }, ttlMs: 3_600_000n });
    expect((await t.exit("job_long")).reason).toBe(ExitReason.TTL);
  });
});

describe("the e-stop", () => {
  let t: Awaited<ReturnType<typeof jobsUnderTest>>;
  beforeAll(async () => (t = await jobsUnderTest()));
  afterAll(() => t.close());

  it("stops running jobs at once, refuses new ones while latched, and lets them run once cleared", async () => {
    t.dispatch("job_moving", { class: "function", artifact: "sleep", args: { ms: 60_000 } });
    await t.started("job_moving");
    t.jobs.estop(true);
    expect(await t.exit("job_moving")).toMatchObject({
      reason: ExitReason.CANCELED,
      codeName: ESTOP_LATCHED,
      signal: "SIGKILL",
    });
    t.dispatch("job_while_latched", { class: "function", artifact: "echo", args: { text: "no" } });
    expect(await t.exit("job_while_latched")).toMatchObject({ reason: ExitReason.REFUSED, codeName: ESTOP_LATCHED });
    t.jobs.estop(false);
    t.dispatch("job_after", { class: "function", artifact: "echo", args: { text: "yes" } });
    expect((await t.exit("job_after")).reason).toBe(ExitReason.COMPLETED);
  });
});

describe("the function sandbox", () => {
  it("starts no worker thread before its first job: an agent that runs none holds none", async () => {
    // A worker's thread exists as soon as it is made, so the count is read at once.
    const threads = () => readdirSync("/proc/self/task").length;
    const before = threads();
    const sandbox = new FunctionSandbox(2);
    expect(threads()).toBe(before);
    await sandbox.close();
  });
});
