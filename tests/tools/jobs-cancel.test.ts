import { describe, expect, it } from "vitest";
import { JobFileRow } from "../../services/tools/db/entities.js";
import { usePlatform } from "../support/platform.js";
import { DATABASE_SERVER, itWith } from "../support/skips.js";
import { until } from "../support/until.js";
import {
  childProcesses,
  createWithFiles,
  holdJob,
  person,
  png,
  sine,
  toolsCall,
  toolsOf,
  untilJob,
  watch,
} from "./jobs-support.js";

// One job per family at a time: a second job of a busy family waits in the queue.
const t = usePlatform({
  services: ["tools", "media"],
  env: { PF_TOOLS_JOBS_PER_FAMILY: "1", PF_TOOLS_QUOTA_FILE: "6" },
});

const user = async () => {
  const sub = person();
  return { sub, token: await t.token({ kind: "user", sub }) };
};

const TRANSCODE = { format: "mp3", sample_rate: 48000, channels: 2 };

describe("cancel", () => {
  // A row held by another session: the embedded database runs one transaction at a time, so nothing would queue.
  itWith(
    DATABASE_SERVER,
    "cancels a queued job at once, and a running one, whose executor stops its tool",
    async () => {
      const { token } = await user();
      const call = toolsCall(t, token);
      const long = await createWithFiles(t.gatewayUrl, token, "audio.process", TRANSCODE, [
        { name: "long.flac", type: "audio/flac", data: await sine(1800, "flac") },
      ]);
      expect(long.status).toBe(201);
      const running = long.body.id;
      // Transcoding: FFmpeg runs, and writes progress as it goes.
      await until(async () => (await call("GET", `/jobs/${running}`)).body.job.progress >= 5, 30_000);
      expect(await childProcesses(process.pid, "ffmpeg")).toHaveLength(1);
      // Its next progress write (or lease renewal) waits on the row: it holds the family's one slot meanwhile.
      const hold = await holdJob(t.platform.databaseUrl, running);
      let cancel: ReturnType<typeof call> | undefined;
      try {
        await until(async () => (await hold.waiting()) >= 1);
        const queued = await createWithFiles(t.gatewayUrl, token, "audio.process", TRANSCODE, [
          { name: "short.wav", type: "audio/wav", data: await sine(1) },
        ]);
        expect(queued.body.state).toBe("queued");
        const canceled = await call("DELETE", `/jobs/${queued.body.id}`);
        expect(canceled.status).toBe(200);
        expect(canceled.body).toMatchObject({ state: "canceled", attempts: 0, files: [] });
        expect(canceled.body.ended_at).toBeTruthy();
        // Canceling it again answers it as it is.
        expect((await call("DELETE", `/jobs/${queued.body.id}`)).body).toEqual(canceled.body);
        // The cancel waits behind the executor on the row.
        cancel = call("DELETE", `/jobs/${running}`);
        await until(async () => (await hold.waiting()) >= 2);
      } finally {
        await hold.release();
      }
      expect((await cancel)?.body).toMatchObject({ state: "canceled", files: [] });
      // The executor saw it and stopped FFmpeg, long before the transcoding would have ended.
      await until(async () => (await childProcesses(process.pid, "ffmpeg")).length === 0);
      const opened = await watch(t.gatewayUrl, token, running);
      const kinds: string[] = [];
      for (let event = await opened.stream!.next(); event; event = await opened.stream!.next())
        if (event.data.kind) kinds.push(event.data.kind);
      expect(kinds.at(-1)).toBe("canceled");
      expect(kinds).not.toContain("succeeded");
      // Its one slot is free again: the next job of the family runs.
      const next = await createWithFiles(t.gatewayUrl, token, "audio.process", { format: "wav" }, [
        { name: "next.wav", type: "audio/wav", data: await sine(1) },
      ]);
      expect((await untilJob(t, token, next.body.id, ["succeeded", "failed"])).state).toBe("succeeded");
      const job = (await call("GET", `/jobs/${running}`)).body.job;
      expect(job).toMatchObject({ state: "canceled", files: [], attempts: 1 });
      const em = toolsOf(t).orm.em.fork();
      expect(await em.count(JobFileRow, { jobId: running, kind: "result" })).toBe(0);
      // Nothing can use a canceled job's inputs: their blobs went.
      expect(await em.count(JobFileRow, { jobId: running, kind: "input", blobKey: { $ne: "" } })).toBe(0);
    },
    120_000,
  );
});

describe("retry", () => {
  it("retries a failed job as a new one with the same input and files; asking again answers it; a succeeded job is 409", async () => {
    const { token } = await user();
    const call = toolsCall(t, token);
    const bad = await createWithFiles(t.gatewayUrl, token, "img.process", { format: "png" }, [
      { name: "fake.png", type: "image/png", data: Buffer.from("not an image at all") },
    ]);
    const failed = await untilJob(t, token, bad.body.id, ["failed", "succeeded"]);
    expect(failed).toMatchObject({ state: "failed", failure: { code: "tools.file.unreadable" } });
    const retried = await call("POST", `/jobs/${failed.id}/retry`, {});
    expect(retried.status).toBe(201);
    expect(retried.body).toMatchObject({
      tool: "img.process",
      state: "queued",
      input: { format: "png" },
      inputs: failed.inputs,
      retry_of: failed.id,
    });
    const again = await call("POST", `/jobs/${failed.id}/retry`, {});
    expect([again.status, again.body.id]).toEqual([201, retried.body.id]);
    expect((await call("GET", `/jobs/${failed.id}`)).body.job.retried_by).toBe(retried.body.id);
    // The retry read the same bytes (handed over, not copied): it fails the same way, not for a missing file.
    const second = await untilJob(t, token, retried.body.id, ["failed", "succeeded"]);
    expect(second.failure.code).toBe("tools.file.unreadable");
    const em = toolsOf(t).orm.em.fork();
    const keys = async (jobId: string) =>
      (await em.find(JobFileRow, { jobId, kind: "input" }, { refresh: true })).map((row) => row.blobKey);
    expect(await keys(failed.id)).toEqual([""]);
    expect(await keys(retried.body.id)).toEqual([`${failed.id}/in/1`]);

    const good = await createWithFiles(t.gatewayUrl, token, "img.process", {}, [
      { name: "a.png", type: "image/png", data: await png(8, 8) },
    ]);
    await untilJob(t, token, good.body.id, ["succeeded"]);
    const refused = await call("POST", `/jobs/${good.body.id}/retry`, {});
    expect([refused.status, refused.body.code]).toEqual([409, "tools.job_not_failed"]);
  });
});

describe("quota", () => {
  it("takes each job's cost from its owner's file quota; a refused creation takes nothing; past it, 429", async () => {
    const { token } = await user();
    const call = toolsCall(t, token);
    const image = await png(8, 8);
    const create = (input: unknown = {}) =>
      createWithFiles(t.gatewayUrl, token, "img.process", input, [{ name: "a.png", type: "image/png", data: image }]);
    expect((await create({ nothing: 1 })).status).toBe(400);
    for (let n = 0; n < 6; n++) expect((await create()).status).toBe(201);
    const over = await create();
    expect([over.status, over.body.code]).toEqual([429, "tools.quota_exceeded"]);
    expect(over.body.retry_after_seconds).toBeGreaterThan(0);
    expect(over.headers.get("retry-after")).toBe(String(over.body.retry_after_seconds));
    // Another person's quota is their own.
    const other = await user();
    const theirs = await createWithFiles(t.gatewayUrl, other.token, "img.process", {}, [
      { name: "a.png", type: "image/png", data: image },
    ]);
    expect(theirs.status).toBe(201);
    expect((await call("GET", `/jobs/${theirs.body.id}`)).status).toBe(404);
  });
});
