import { beforeAll, describe, expect, it } from "vitest";
import { ExitReason } from "../../gen/pf/bot/v1/jobs_pb.js";
import type { BotContext } from "../../services/bot/context.js";
import { endLostJobs } from "../../services/bot/workers/lost.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { pairDevice, TestDevice } from "../support/device.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import {
  botCall,
  dispatchBody,
  jobEvents,
  jobFrame,
  jobIn,
  linkedDevice,
  managerToken,
  robotOf,
  runToken,
} from "./support.js";

/** How dispatched jobs end short of their device's own exit: cancel in each state, a device that vanishes. */
const clock = new ManualClock(new Date());
const t = usePlatform({ services: ["bot"], clock });
let run: ReturnType<typeof botCall>;
beforeAll(async () => {
  run = botCall(t, await runToken(t));
});

describe("cancel (POST /jobs/{id}/cancel)", () => {
  it("sends job_cancel for a frame on the device not acknowledged yet; the device's exit ends it", async () => {
    const { paired, device } = await linkedDevice(t);
    const body = dispatchBody({ node_id: paired.deviceId });
    await run("POST", "/jobs", body);
    await device.next("job");
    const answer = await run("POST", `/jobs/${body.id}/cancel`, {});
    expect(answer.body.job).toMatchObject({ state: "DISPATCH_STATE_DISPATCHED", cancel_requested: true });
    expect(await device.next("jobCancel")).toMatchObject({ jobId: body.id });
    device.exit(body.id, { reason: ExitReason.CANCELED });
    expect(await jobIn(t, body.id, "DISPATCH_STATE_ENDED")).toMatchObject({ exit: { reason: "EXIT_REASON_CANCELED" } });
  });

  it("sends job_cancel for a running job", async () => {
    const { paired, device } = await linkedDevice(t);
    const body = dispatchBody({ node_id: paired.deviceId });
    await run("POST", "/jobs", body);
    await device.next("job");
    device.ack(body.id);
    device.started(body.id);
    await jobIn(t, body.id, "DISPATCH_STATE_RUNNING");
    await run("POST", `/jobs/${body.id}/cancel`, {});
    expect(await device.next("jobCancel")).toMatchObject({ jobId: body.id });
  });

  it("ends at once a job whose frame waits for an offline device (it never starts)", async () => {
    const robot = await robotOf(t);
    const paired = await pairDevice(t, robot.code);
    const device = await TestDevice.connect(t, paired.credential);
    device.close();
    await device.ended;
    const body = dispatchBody({ node_id: paired.deviceId });
    await run("POST", "/jobs", body);
    const answer = await run("POST", `/jobs/${body.id}/cancel`, {});
    expect(answer.body.job).toMatchObject({
      state: "DISPATCH_STATE_ENDED",
      exit: { reason: "EXIT_REASON_CANCELED" },
      cancel_requested: true,
    });
    // Linking again, the device is not sent it.
    const again = await TestDevice.connect(t, paired.credential);
    again.close();
    await again.ended;
    expect(again.frames.some((frame) => frame.frame.case === "job")).toBe(false);
  });

  it("answers an ended job as it is, and a job never dispatched 404", async () => {
    const { paired, device } = await linkedDevice(t);
    const body = dispatchBody({ node_id: paired.deviceId });
    await run("POST", "/jobs", body);
    await device.runNext(["done\n"]);
    const ended = await jobIn(t, body.id, "DISPATCH_STATE_ENDED");
    const answer = await run("POST", `/jobs/${body.id}/cancel`, {});
    expect(answer.status).toBe(200);
    expect(answer.body.job).toEqual(ended);
    expect((await run("POST", "/jobs/job_never2/cancel", {})).body).toMatchObject({ status: 404 });
  });
});

describe("a device that vanishes, and comes back", () => {
  it("a job it no longer runs after linking again ends lost; one it runs that bot ended is cancelled", async () => {
    const { paired, device } = await linkedDevice(t);
    const gone = dispatchBody({ node_id: paired.deviceId });
    const stale = dispatchBody({ node_id: paired.deviceId });
    for (const body of [gone, stale]) await run("POST", "/jobs", body);
    for (const body of [gone, stale]) {
      await device.next("job");
      device.ack(body.id);
    }
    await jobIn(t, stale.id, "DISPATCH_STATE_RECEIVED");
    device.close();
    await device.ended;
    // Cancelled while the device was away: bot cannot end it (the device may run it), so it waits for the device.
    await run("POST", `/jobs/${stale.id}/cancel`, {});
    const back = await TestDevice.connect(t, paired.credential, { runningJobIds: [stale.id, "job_unknown1"] });
    expect(await jobIn(t, gone.id, "DISPATCH_STATE_ENDED")).toMatchObject({ exit: { reason: "EXIT_REASON_LOST" } });
    const cancels = [await back.next("jobCancel"), await back.next("jobCancel")].map((frame) => frame.jobId);
    expect(cancels.sort()).toEqual([stale.id, "job_unknown1"].sort());
  });

  it("a later hello on the same link advertises again and ends nothing", async () => {
    const { robot, paired, device } = await linkedDevice(t);
    const body = dispatchBody({ node_id: paired.deviceId });
    await run("POST", "/jobs", body);
    await device.next("job");
    device.ack(body.id);
    await jobIn(t, body.id, "DISPATCH_STATE_RECEIVED");
    device.send({ case: "hello", value: { agentVersion: "again/2", classes: ["code"], runningJobIds: [] } });
    const manager = botCall(t, await managerToken(t));
    await until(async () => {
      const listed = (await manager("GET", `/robots/${robot.id}/devices`)).body.devices.devices;
      return listed[0].agent_version === "again/2";
    });
    expect((await run("GET", `/jobs/${body.id}`)).body.job.state).toBe("DISPATCH_STATE_RECEIVED");
  });

  it("a job whose device says nothing of it within its ttl (and the grace) ends lost (the backstop)", async () => {
    const robot = await robotOf(t);
    const paired = await pairDevice(t, robot.code);
    const device = await TestDevice.connect(t, paired.credential);
    const body = dispatchBody({ node_id: paired.deviceId, job: jobFrame({ ttl_ms: 1_000 }) });
    await run("POST", "/jobs", body);
    await device.next("job");
    device.ack(body.id);
    await jobIn(t, body.id, "DISPATCH_STATE_RECEIVED");
    const ctx = t.platform.contexts.get("bot") as BotContext;
    // Not yet: the ttl has not passed.
    await endLostJobs(ctx);
    expect((await run("GET", `/jobs/${body.id}`)).body.job.state).toBe("DISPATCH_STATE_RECEIVED");
    clock.advance(1_000 + 30_000 + 1);
    expect(await endLostJobs(ctx)).toBeGreaterThanOrEqual(1);
    const job = await jobIn(t, body.id, "DISPATCH_STATE_ENDED");
    expect(job).toMatchObject({ exit: { reason: "EXIT_REASON_LOST" } });
    // The device, still linked, is told to stop it.
    expect(await device.next("jobCancel")).toMatchObject({ jobId: body.id });
    const events = await jobEvents(t, body.id);
    expect(events.at(-1)).toMatchObject({ subject: "bot.job.ended", exit: { reason: "EXIT_REASON_LOST" } });
  });
});
