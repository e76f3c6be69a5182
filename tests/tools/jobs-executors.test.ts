import { generateKeyPairSync } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, afterEach, beforeAll, expect, it, onTestFailed } from "vitest";
import type { Clock } from "../../services/kit/runtime/clock.js";
import { JobFileRow } from "../../services/tools/db/entities.js";
import { resultBlobKey } from "../../services/tools/domain/jobs/files.js";
import { reapLapsed } from "../../services/tools/workers/reaper.js";
import { sweepJobs } from "../../services/tools/workers/sweep.js";
import { startChildPlatform, type ChildPlatform } from "../support/child-platform.js";
import { httpAt, startTestPlatform, type TestPlatform } from "../support/platform.js";
import { freePorts } from "../support/ports.js";
import { DATABASE_SERVER, describeWith } from "../support/skips.js";
import { until } from "../support/until.js";
import {
  childProcesses,
  createWithFiles,
  fileBytes,
  person,
  png,
  sha256,
  sine,
  toolsCall,
  toolsOf,
  untilJob,
  watch,
} from "./jobs-support.js";

// Short, so a thawed executor renews (and learns it lost its job) soon; long enough for a busy machine's stalls: an
// executor that renews nothing for two thirds of it loses its job to the observer's reaper.
const LEASE_MS = 10_000;
const DAY = 24 * 3_600_000;
const TRANSCODE = { format: "mp3", sample_rate: 48000, channels: 2 };

/**
 * Executors in processes of their own, on one database and blob directory, which a test may kill (SIGKILL) or
 * freeze (SIGSTOP). The observer, in the test's process, runs no audio executor (its FFmpeg setting names nothing),
 * so an audio job runs only in a child; its clock can be put ahead, so its reaper and sweep see a lease lapse or a
 * result expire when a test says.
 */
describeWith(DATABASE_SERVER, "executors in processes of their own", () => {
  const clock = new OffsetClock();
  const key = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const shared = {
    PF_JWT_PRIVATE_KEY: key,
    PF_SEAL_KEY: "tools-executors-seal",
    PF_IP_HASH_KEY: "tools-executors-ip",
    PF_TOOLS_LEASE_MS: String(LEASE_MS),
    PF_TOOLS_MAX_ATTEMPTS: "2",
  };
  let observer: TestPlatform;
  const children: ChildPlatform[] = [];
  let settings: Record<string, string>;

  /** A child platform running tools (and media) on the observer's database and blob directory. */
  async function child(): Promise<{ platform: ChildPlatform; port: string }> {
    const port = String((await freePorts(1))[0]);
    const platform = await startChildPlatform({ ...settings, PF_HTTP_PORT: port });
    children.push(platform);
    // A failed test shows what its executors logged (an executor losing its job says why there).
    onTestFailed(() => console.error(`the child platform on port ${port} logged:\n${platform.output().slice(-6_000)}`));
    return { platform, port };
  }

  beforeAll(async () => {
    observer = await startTestPlatform({
      services: ["tools", "media"],
      clock,
      env: { ...shared, PF_TOOLS_FFMPEG: "/nonexistent/ffmpeg" },
    });
    settings = {
      ...shared,
      DATABASE_URL: observer.platform.databaseUrl,
      NATS_URL: "",
      PF_SERVICES: "tools,media",
      PF_RPC_PORT: "0",
      PF_DATA_DIR: toolsOf(observer).config.dataDir,
    };
  });
  // Each test's executors are its own: none is left to take the next test's jobs.
  afterEach(async () => {
    for (const each of children.splice(0)) await each.kill();
  });
  afterAll(() => observer?.stop());

  const user = async () => {
    const sub = person();
    return { sub, token: await observer.token({ kind: "user", sub }) };
  };
  const tools = () => toolsOf(observer);
  /** Runs the observer's reaper as if the lease had lapsed (its clock past it), then puts its clock back. */
  const reapNow = async () => {
    clock.offsetMs = 10 * LEASE_MS;
    await reapLapsed(tools());
    clock.offsetMs = 0;
  };
  const resultKeys = async (jobId: string) =>
    (await tools().orm.em.fork().find(JobFileRow, { jobId, kind: "result" }, { refresh: true })).map(
      (row) => row.blobKey,
    );
  const blobFile = (blobKey: string) => join(tools().config.dataDir, "blobs", "tools", blobKey);
  const exists = (path: string) =>
    readFile(path).then(
      () => true,
      () => false,
    );
  const kinds = async (token: string, id: string) => {
    const opened = await watch(observer.gatewayUrl, token, id);
    const found: string[] = [];
    for (let event = await opened.stream!.next(30_000); event; event = await opened.stream!.next(30_000))
      if (event.data.kind) found.push(event.data.kind);
    return found;
  };
  /** An audio job long enough to be running when the test acts, created through a child's gateway; once transcoding. */
  const transcoding = async (gatewayUrl: string, token: string) => {
    const created = await createWithFiles(gatewayUrl, token, "audio.process", TRANSCODE, [
      { name: "long.flac", type: "audio/flac", data: await sine(1800, "flac") },
    ]);
    expect(created.status).toBe(201);
    const call = toolsCall(observer, token);
    await until(async () => (await call("GET", `/jobs/${created.body.id}`)).body.job.progress > 5, 60_000);
    return created.body.id as string;
  };

  it("starts a job again once its executor is killed mid-job; what the lost attempt stored is never served, and goes with the job's expiry", async () => {
    const { token } = await user();
    const first = await child();
    const id = await transcoding(`http://127.0.0.1:${first.port}`, token);
    await first.platform.kill();
    // What the lost attempt might have stored before it died: a result file no row names.
    await tools().blobs.put(resultBlobKey(id, 1, 1), Readable.from([Buffer.from("partial")]), "audio/mpeg");
    const call = toolsCall(observer, token);
    await reapNow();
    const requeued = (await call("GET", `/jobs/${id}`)).body.job;
    expect(requeued).toMatchObject({ state: "queued", attempts: 1 });
    expect(await call("GET", `/jobs/${id}/files/1`)).toMatchObject({
      status: 409,
      body: { code: "tools.job_not_succeeded" },
    });

    await child();
    const done = await untilJob(observer, token, id, ["succeeded", "failed"], 120_000);
    // A job that failed says why here (its failure's code and detail), before its state is compared.
    expect(done.failure).toBeUndefined();
    expect(done).toMatchObject({ state: "succeeded", attempts: 2, output: { format: "mp3" } });
    expect(await resultKeys(id)).toEqual([resultBlobKey(id, 2, 1)]);
    const served = await fileBytes(observer.gatewayUrl, token, id, 1);
    expect(served.status).toBe(200);
    expect(sha256(served.bytes)).toBe(done.files[0].sha256);
    expect(served.bytes.toString()).not.toBe("partial");
    const history = await kinds(token, id);
    expect(history.filter((kind) => kind === "started")).toHaveLength(2);
    expect(history.filter((kind) => kind === "queued")).toHaveLength(2);
    expect(history.filter((kind) => kind === "succeeded")).toHaveLength(1);

    // Past its expiry the sweep takes every attempt's files, the lost one's too.
    clock.offsetMs = DAY + 60_000;
    await sweepJobs(tools());
    clock.offsetMs = 0;
    expect(await exists(blobFile(resultBlobKey(id, 1, 1)))).toBe(false);
    expect(await exists(blobFile(resultBlobKey(id, 2, 1)))).toBe(false);
    expect(await call("GET", `/jobs/${id}/files/1`)).toMatchObject({
      status: 410,
      body: { code: "tools.result_expired" },
    });
  }, 510_000); // up to three starts of a child (CHILD_START_MS each) and the jobs

  it("queues a job again when its executor stops; fails it with tools.executor.lost once started PF_TOOLS_MAX_ATTEMPTS times and lost; its retry runs", async () => {
    const { token } = await user();
    const call = toolsCall(observer, token);
    const first = await child();
    const id = await transcoding(`http://127.0.0.1:${first.port}`, token);
    // Stopped as an operator stops it (SIGTERM): its running job goes back to the queue before it exits.
    await first.platform.stop();
    expect((await call("GET", `/jobs/${id}`)).body.job).toMatchObject({ state: "queued", attempts: 1, progress: 0 });
    const second = await child();
    await until(async () => (await call("GET", `/jobs/${id}`)).body.job.attempts === 2, 60_000);
    await until(async () => (await call("GET", `/jobs/${id}`)).body.job.progress > 5, 60_000);
    await second.platform.kill();
    await reapNow();
    const failed = (await call("GET", `/jobs/${id}`)).body.job;
    expect(failed).toMatchObject({ state: "failed", attempts: 2, failure: { code: "tools.executor.lost" } });
    expect(failed.files).toEqual([]);

    // Retried where the tool runs (the observer has no FFmpeg: 503 tools.tool.unavailable).
    expect(await call("POST", `/jobs/${id}/retry`, {})).toMatchObject({
      status: 503,
      body: { code: "tools.tool.unavailable" },
    });
    const third = await child();
    const retry = await toolsCall(httpAt(`http://127.0.0.1:${third.port}`), token)("POST", `/jobs/${id}/retry`, {});
    expect(retry.status).toBe(201);
    const retried = await untilJob(observer, token, retry.body.id, ["succeeded", "failed"], 120_000);
    expect(retried.failure).toBeUndefined();
    expect(retried.state).toBe("succeeded");
  }, 510_000); // up to three starts of a child (CHILD_START_MS each) and the jobs

  it("never lets an executor that lost its job complete it: the one that took the job over does, once", async () => {
    const { token } = await user();
    const call = toolsCall(observer, token);
    const first = await child();
    const id = await transcoding(`http://127.0.0.1:${first.port}`, token);
    const pid = await pidOf(first.port);
    expect(await childProcesses(pid, "ffmpeg")).toHaveLength(1);
    await freeze(pid, observer);
    try {
      await reapNow();
      await child();
      const done = await untilJob(observer, token, id, ["succeeded", "failed"], 120_000);
      expect(done.failure).toBeUndefined();
      expect(done).toMatchObject({ state: "succeeded", attempts: 2 });
    } finally {
      process.kill(pid, "SIGCONT");
    }
    // Thawed, the first executor finds the job is not its own at its next renewal, and stops its FFmpeg.
    await until(async () => (await childProcesses(pid, "ffmpeg")).length === 0, 30_000);
    const history = await kinds(token, id);
    expect(history.filter((kind) => kind === "succeeded")).toHaveLength(1);
    expect(await resultKeys(id)).toEqual([resultBlobKey(id, 2, 1)]);
    // Had it stored its result before it stopped, it would have deleted it: no row names it.
    await until(async () => !(await exists(blobFile(resultBlobKey(id, 1, 1)))));
    expect((await call("GET", `/jobs/${id}`)).body.job).toMatchObject({ state: "succeeded", attempts: 2 });
  }, 510_000); // up to three starts of a child (CHILD_START_MS each) and the jobs

  it("runs each job once with executors in two processes taking from one queue", async () => {
    const { token } = await user();
    const other = await child();
    const image = await png(16, 16);
    const created: { status: number; body: any }[] = [];
    for (let n = 0; n < 12; n++)
      created.push(
        await createWithFiles(
          n % 2 === 0 ? observer.gatewayUrl : `http://127.0.0.1:${other.port}`,
          token,
          "img.process",
          {},
          [{ name: "a.png", type: "image/png", data: image }],
        ),
      );
    expect(created.map((answer) => answer.status)).toEqual(Array(12).fill(201));
    for (const answer of created) {
      const done = await untilJob(observer, token, answer.body.id, ["succeeded", "failed"]);
      expect(done.failure).toBeUndefined();
      expect(done).toMatchObject({ state: "succeeded", attempts: 1 });
      const history = await kinds(token, answer.body.id);
      expect(history).toEqual(["queued", "started", ...history.slice(2, -1), "succeeded"]);
      expect(history.filter((kind) => kind === "started" || kind === "succeeded")).toHaveLength(2);
    }
  }, 210_000); // a child's start (CHILD_START_MS) and the jobs
});

/** The process id of the child platform serving on this port (read from /proc: Linux). */
async function pidOf(port: string): Promise<number> {
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const environ = await readFile(`/proc/${entry}/environ`, "utf8").catch(() => "");
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (environ.split("\0").includes(`PF_HTTP_PORT=${port}`) && cmdline.includes("platform/main.ts"))
      return Number(entry);
  }
  throw new Error(`no child platform serves on ${port}`);
}

/**
 * Stops the process (SIGSTOP) at a moment none of the database's sessions is inside a transaction, so nothing it
 * froze holds a row another process needs (tried again, thawed in between, until such a moment).
 */
async function freeze(pid: number, observer: TestPlatform): Promise<void> {
  const em = toolsOf(observer).orm.em;
  await until(async () => {
    process.kill(pid, "SIGSTOP");
    const [{ busy }] = await em.getConnection().execute<{ busy: number }[]>(
      `select count(*)::int as busy from pg_stat_activity
       where datname = current_database() and pid <> pg_backend_pid() and backend_type = 'client backend'
         and (state like 'idle in transaction%' or state = 'active')`,
    );
    if (busy === 0) return true;
    process.kill(pid, "SIGCONT");
    return false;
  });
}

/** The wall clock, put ahead by `offsetMs` while a test asks. */
class OffsetClock implements Clock {
  offsetMs = 0;
  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }
}
