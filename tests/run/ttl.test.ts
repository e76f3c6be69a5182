import { fromJson, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { BotService } from "../../gen/pf/bot/v1/bot_pb.js";
import { JobFrameSchema } from "../../gen/pf/bot/v1/jobs_pb.js";
import { qualified } from "../../services/kit/db/orm.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { untilPassesAfter } from "../support/lease-tries.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { fresh, onlineDevice, project, projectClaims, runCall, runOf, untilBilled } from "./support.js";

/**
 * What the platform's clock decides: a job no device takes within its ttl ends `unplaceable`, a job whose device
 * vanished ends `lost` once its ttl and the reaper's grace have passed (bot asked first), and a dispatch bot took
 * but run never recorded is found again by run's next try (bot's dispatch is idempotent by job id), never sent
 * twice. Run's workers pass often; the clock is moved by hand.
 */
const clock = new ManualClock(new Date());
const t = usePlatform({
  services: ["run", "bot", "billing"],
  clock,
  env: { PF_RUN_PLACEMENT_EVERY_MS: "50", PF_RUN_REAPER_EVERY_MS: "50", PF_RUN_REAPER_GRACE_MS: "1000" },
});

const now = () => timestampFromDate(clock.now());

async function projectCall() {
  const call = runCall(t, await t.token(projectClaims(project())));
  const read = async (id: string) => (await call("GET", `/jobs/${id}`)).body.job;
  const submit = async (jobClass: string, ttl = 1_000) =>
    (await call("POST", "/jobs", { class: jobClass, artifact: "echo", args: {}, ttl_ms: ttl, limits: {} })).body.job
      .id as string;
  return { call, read, submit };
}

describe("ttl", () => {
  it("ends a job no device advertises the class of within its ttl `unplaceable`, billing 0", async () => {
    const { read, submit } = await projectCall();
    const id = await submit(fresh("none"));
    await untilPassesAfter(runOf(t), "run.placement");
    expect(await read(id)).toMatchObject({ state: "queued" });
    clock.advance(1_001);
    await until(async () => (await read(id)).state === "ended");
    expect(await read(id)).toMatchObject({
      exit: { reason: "unplaceable", code_name: "bot.class_unadvertised" },
      usage_seconds: "0",
      usage_final: true,
    });
    expect(await untilBilled(t, id)).toEqual([0]);
  });

  it("ends a job whose device vanished mid-run `lost` once its ttl and the grace have passed, billing 0", async () => {
    const jobClass = fresh("cls");
    const { device } = await onlineDevice(t, jobClass);
    const { read, submit } = await projectCall();
    const id = await submit(jobClass);
    await device.next("job");
    device.send({ case: "ack", value: { jobId: id, receivedAt: now() } });
    device.send({ case: "started", value: { jobId: id, startedAt: now() } });
    await until(async () => (await read(id)).state === "running");
    device.close();
    await device.ended;
    await untilPassesAfter(runOf(t), "run.reaper");
    expect(await read(id)).toMatchObject({ state: "running" });
    clock.advance(1_000 + 1_000 + 1);
    await until(async () => (await read(id)).state === "ended");
    expect(await read(id)).toMatchObject({ exit: { reason: "lost" }, usage_seconds: "0", usage_final: true });
    expect(await untilBilled(t, id)).toEqual([0]);
  });
});

describe("placement", () => {
  it("never dispatches twice: a dispatch bot took but run did not record is answered by bot's idempotent dispatch", async () => {
    const jobClass = fresh("late");
    const { read, submit } = await projectCall();
    const id = await submit(jobClass, 60_000);
    // No device advertises the class: the try is refused, the next one due later by the platform's clock.
    await untilPassesAfter(runOf(t), "run.placement");
    expect(await read(id)).toMatchObject({ state: "queued" });
    // As if run's try reached bot and run stopped before recording bot's answer: bot holds the dispatch.
    const { device } = await onlineDevice(t, jobClass);
    const em = runOf(t).orm.em.fork();
    const [stored] = await em
      .getConnection()
      .execute<{ frame: JsonObject; project_id: string }[]>(
        `select frame, project_id from ${qualified(em, "jobs")} where id = ?`,
        [id],
      );
    const bot = t.client(BotService, await t.token({ kind: "service", svc: "run", caps: ["bot.job.dispatch"] }));
    await bot.dispatchJob({
      id,
      job: fromJson(JobFrameSchema, stored.frame),
      projectId: stored.project_id,
      provider: "run",
    });
    expect(await device.next("job")).toMatchObject({ jobId: id });
    expect(await read(id)).toMatchObject({ state: "queued" });
    // Run's next try finds bot's dispatch: placed, and no second frame.
    clock.advance(60_000);
    await until(async () => (await read(id)).state === "placed");
    device.send({ case: "ack", value: { jobId: id, receivedAt: now() } });
    await until(async () => (await read(id)).timings.received_at !== undefined);
    expect(device.frames.filter((frame) => frame.frame.case === "job")).toHaveLength(1);
  });
});
