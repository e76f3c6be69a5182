import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { ExitReason } from "../../gen/pf/bot/v1/jobs_pb.js";
import { OutputStream } from "../../gen/pf/bot/v1/link_pb.js";
import { untilPassesAfter } from "../support/lease-tries.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { openEventStream, type EventStreamReader } from "../support/sse.js";
import { until } from "../support/until.js";
import type { TestDevice } from "../support/device.js";
import { fresh, onlineDevice, project, projectClaims, runCall, runOf, untilBilled } from "./support.js";

/**
 * Jobs on a scripted device over bot's real link (tests/support/device.ts): placement on the device advertising the
 * class, the device's frames moving the job and filling its stream and result, cancel in each state, and usage
 * billed once per job from the device's start and exit times.
 */
const t = usePlatform({
  services: ["run", "bot", "billing"],
  env: { PF_RUN_STREAM_MAX_BYTES: "2048", PF_RUN_RESULT_MAX_BYTES: "1024" },
});

/** A project's app, a device of a class of its own, and a job body of that class. */
async function setUp() {
  const jobClass = fresh("cls");
  const { device, deviceId, robotId } = await onlineDevice(t, jobClass);
  const token = await t.token(projectClaims(project()));
  const call = runCall(t, token);
  const submit = async (extra: Record<string, unknown> = {}) => {
    const body = { class: jobClass, artifact: "echo", args: { text: "hi" }, ttl_ms: 60_000, limits: {}, ...extra };
    const answer = await call("POST", "/jobs", body);
    expect(answer.status).toBe(201);
    return answer.body.job.id as string;
  };
  const read = async (id: string) => (await call("GET", `/jobs/${id}`)).body.job;
  const untilState = (id: string, state: string) => until(async () => (await read(id)).state === state);
  return { device, deviceId, robotId, token, call, submit, read, untilState };
}

const at = (ms: number) => timestampFromDate(new Date(ms));

/** The device runs a job from its frame: ack, started at `startedAt`, the outputs, exit at `endedAt`. */
function run(device: TestDevice, jobId: string, run: { startedAt: number; endedAt: number; outputs?: string[] }) {
  device.ack(jobId);
  device.send({ case: "started", value: { jobId, startedAt: at(run.startedAt) } });
  (run.outputs ?? []).forEach((text, i) => device.output(jobId, i + 1, text));
  device.send({
    case: "exit",
    value: { jobId, exit: { reason: ExitReason.COMPLETED }, startedAt: at(run.startedAt), endedAt: at(run.endedAt) },
  });
}

/** The events of a stream up to its end. */
async function rest(stream: EventStreamReader) {
  const events = [];
  for (let event = await stream.next(); event; event = await stream.next()) events.push(event);
  return events;
}

describe("a job on a device", () => {
  it("is placed on the device advertising its class, runs, streams its output in order, ends with its exit and is billed once", async () => {
    const { device, deviceId, robotId, token, call, submit, read } = await setUp();
    const id = await submit();
    const { ticket } = (await call("POST", `/jobs/${id}/stream/ticket`, {})).body;
    const stream = (await openEventStream(`${t.gatewayUrl}/run/api/v1/jobs/${id}/stream?ticket=${ticket}`)).stream!;
    const frame = await device.next("job");
    expect(frame).toMatchObject({ jobId: id, job: { class: expect.stringMatching(/^cls/), artifact: "echo" } });
    const started = Date.now();
    run(device, id, { startedAt: started, endedAt: started + 2_500, outputs: ["one\n", "two\n", "three\n"] });
    const events = await rest(stream);
    expect(events.map((event) => [event.id, event.event])).toEqual([
      [undefined, "job"],
      ["1", "state"],
      ["2", "state"],
      ["3", "state"],
      ["4", "output"],
      ["5", "output"],
      ["6", "output"],
      ["7", "state"],
    ]);
    expect(events.slice(1, 4).map((event) => event.data.state.state)).toEqual(["queued", "placed", "running"]);
    expect(events[2].data.state.placement).toEqual({ device_id: deviceId, robot_id: robotId });
    expect(events.slice(4, 7).map((event) => event.data.output.text)).toEqual(["one\n", "two\n", "three\n"]);
    expect(events[7].data.state).toMatchObject({ state: "ended", exit: { reason: "completed", code: 0 } });
    const job = await read(id);
    expect(job).toMatchObject({
      state: "ended",
      placement: { device_id: deviceId, robot_id: robotId },
      exit: { reason: "completed" },
      result: { stdout: "one\ntwo\nthree\n", stderr: "", truncated: false },
    });
    expect(new Date(job.timings.started_at).getTime()).toBe(started);
    expect(await untilBilled(t, id)).toEqual([3]);
    expect(await read(id)).toMatchObject({ usage_seconds: "3", usage_final: true });
    expect((await outboxEvents(t, "run", id)).filter((event) => event.subject === "run.job.metered")).toHaveLength(1);
    // The Bearer token opens the same stream, from the start.
    const again = (
      await openEventStream(`${t.gatewayUrl}/run/api/v1/jobs/${id}/stream`, {
        authorization: `Bearer ${token}`,
      })
    ).stream!;
    expect((await rest(again)).map((event) => event.id)).toEqual([undefined, "1", "2", "3", "4", "5", "6", "7"]);
  });

  it("resumes its stream in the middle with Last-Event-ID", async () => {
    const { device, token, submit } = await setUp();
    const id = await submit();
    const url = `${t.gatewayUrl}/run/api/v1/jobs/${id}/stream`;
    const auth = { authorization: `Bearer ${token}` };
    const first = (await openEventStream(url, auth)).stream!;
    const frame = await device.next("job");
    device.ack(frame.jobId);
    device.started(frame.jobId);
    device.output(id, 1, "first\n");
    device.output(id, 2, "second\n", OutputStream.STDERR);
    let last;
    do last = await first.next();
    while (last?.data.output?.text !== "second\n");
    await first.close();
    device.output(id, 3, "third\n");
    device.exit(id);
    const resumed = await rest((await openEventStream(url, { ...auth, "last-event-id": last.id! })).stream!);
    expect(resumed[0].event).toBe("job");
    expect(resumed.slice(1).map((event) => [event.id, event.data.output?.text ?? event.data.state.state])).toEqual([
      [String(Number(last.id) + 1), "third\n"],
      [String(Number(last.id) + 2), "ended"],
    ]);
    expect(last.data.output.stream).toBe("OUTPUT_STREAM_STDERR");
  });

  it("bills the device's start to its exit in whole seconds rounded up, clamped to ttl, and 0 for a job that never started", async () => {
    const { device, submit, read } = await setUp();
    const clamped = await submit({ ttl_ms: 2_000 });
    await device.next("job");
    run(device, clamped, { startedAt: Date.now(), endedAt: Date.now() + 5_000 });
    expect(await untilBilled(t, clamped)).toEqual([2]);
    const short = await submit();
    await device.next("job");
    run(device, short, { startedAt: Date.now(), endedAt: Date.now() + 1 });
    expect(await untilBilled(t, short)).toEqual([1]);
    const refused = await submit();
    await device.next("job");
    device.ack(refused);
    device.exit(refused, { reason: ExitReason.REFUSED, detail: "net public cannot be enforced here" });
    expect(await untilBilled(t, refused)).toEqual([0]);
    expect(await read(refused)).toMatchObject({ exit: { reason: "refused" }, usage_seconds: "0", usage_final: true });
  });

  it("ends with the exit the device reports: ttl before start and while running, a limit, an input digest mismatch", async () => {
    const { device, submit, read } = await setUp();
    const cases = [
      { exit: { reason: ExitReason.TTL }, start: false, want: { reason: "ttl" } },
      { exit: { reason: ExitReason.TTL, signal: "SIGKILL" }, start: true, want: { reason: "ttl", signal: "SIGKILL" } },
      {
        exit: { reason: ExitReason.LIMIT, limit: "memory_bytes" },
        start: true,
        want: { reason: "limit", limit: "memory_bytes" },
      },
      {
        exit: { reason: ExitReason.INPUT_DIGEST_MISMATCH, codeName: "run.job.input_digest_mismatch", detail: "in.txt" },
        start: false,
        want: { reason: "input_digest_mismatch", code_name: "run.job.input_digest_mismatch" },
      },
    ];
    for (const { exit, start, want } of cases) {
      const id = await submit();
      await device.next("job");
      device.ack(id);
      if (start) device.started(id);
      device.exit(id, exit);
      await until(async () => (await read(id)).usage_final === true);
      const job = await read(id);
      expect(job, JSON.stringify(want)).toMatchObject({ state: "ended", exit: want });
      if (!start) expect(job.usage_seconds, JSON.stringify(want)).toBe("0");
    }
  });

  it("keeps the first bytes of output: the stream to its bound (the chunk reaching it cut and marked), the result to its own", async () => {
    const { device, submit, read, token } = await setUp();
    const id = await submit();
    await device.next("job");
    device.ack(id);
    device.started(id);
    ["a", "b", "c"].forEach((letter, i) => device.output(id, i + 1, letter.repeat(900)));
    device.exit(id);
    await until(async () => (await read(id)).state === "ended");
    const job = await read(id);
    expect(job.result).toEqual({ stdout: "a".repeat(900) + "b".repeat(124), stderr: "", truncated: true });
    const events = await rest(
      (await openEventStream(`${t.gatewayUrl}/run/api/v1/jobs/${id}/stream`, { authorization: `Bearer ${token}` }))
        .stream!,
    );
    const outputs = events.filter((event) => event.event === "output").map((event) => event.data.output);
    expect(outputs).toEqual([
      { stream: "OUTPUT_STREAM_STDOUT", text: "a".repeat(900), truncated: false },
      { stream: "OUTPUT_STREAM_STDOUT", text: "b".repeat(900), truncated: false },
      { stream: "OUTPUT_STREAM_STDOUT", text: "c".repeat(248), truncated: true },
    ]);
    expect(events.at(-1)!.data.state.state).toBe("ended");
  });
});

describe("cancel", () => {
  it("of a queued job that no device could take: ended at once, nothing to bill (0 recorded)", async () => {
    const { call } = await setUp();
    const job = await call("POST", "/jobs", {
      class: fresh("none"),
      artifact: "x",
      args: {},
      ttl_ms: 60_000,
      limits: {},
    });
    const id = job.body.job.id;
    await untilPassesAfter(runOf(t), "run.placement");
    const answer = await call("POST", `/jobs/${id}/cancel`, {});
    expect(answer.status).toBe(200);
    expect(answer.body.job).toMatchObject({ state: "ended", exit: { reason: "canceled" } });
    expect(await untilBilled(t, id)).toEqual([0]);
  });

  it("of a placed job whose frame is already on the device: ended at once, the device told, so it never starts", async () => {
    const { device, call, submit, untilState, read } = await setUp();
    const id = await submit();
    await device.next("job");
    await untilState(id, "placed");
    const answer = await call("POST", `/jobs/${id}/cancel`, {});
    expect(answer.body.job).toMatchObject({ state: "ended", exit: { reason: "canceled" }, cancel_requested: false });
    expect(await device.next("jobCancel")).toEqual(expect.objectContaining({ jobId: id }));
    device.exit(id, { reason: ExitReason.CANCELED });
    expect(await untilBilled(t, id)).toEqual([0]);
    expect((await read(id)).timings.started_at).toBeUndefined();
  });

  it("of a running job: killed by a job_cancel frame, ended when the device reports it, billed for what ran", async () => {
    const { device, call, submit, untilState, read } = await setUp();
    const id = await submit();
    await device.next("job");
    const started = Date.now();
    device.ack(id);
    device.send({ case: "started", value: { jobId: id, startedAt: at(started) } });
    await untilState(id, "running");
    const answer = await call("POST", `/jobs/${id}/cancel`, {});
    expect(answer.body.job).toMatchObject({ state: "running", cancel_requested: true });
    await device.next("jobCancel");
    device.send({
      case: "exit",
      value: { jobId: id, exit: { reason: ExitReason.CANCELED, signal: "SIGKILL" }, endedAt: at(started + 1_200) },
    });
    expect(await untilBilled(t, id)).toEqual([2]);
    expect(await read(id)).toMatchObject({ state: "ended", exit: { reason: "canceled", signal: "SIGKILL" } });
  });

  it("of an ended job: answered unchanged (200)", async () => {
    const { device, call, submit, read } = await setUp();
    const id = await submit();
    await device.next("job");
    run(device, id, { startedAt: Date.now(), endedAt: Date.now() + 10 });
    await until(async () => (await read(id)).usage_final === true);
    const before = await read(id);
    const answer = await call("POST", `/jobs/${id}/cancel`, {});
    expect(answer.status).toBe(200);
    expect(answer.body.job).toEqual(before);
    // Billing hears of the usage after run settled it (the usage effect): waited for, then counted once.
    expect(await untilBilled(t, id)).toEqual([1]);
  });
});
