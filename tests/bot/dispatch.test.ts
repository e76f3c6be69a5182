import { fromJson } from "@bufbuild/protobuf";
import { ValueSchema } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { BotService } from "../../gen/pf/bot/v1/bot_pb.js";
import { OutputStream } from "../../gen/pf/bot/v1/link_pb.js";
import { qualified } from "../../services/kit/db/orm.js";
import { problemOf } from "../../services/kit/handler/problem.js";
import { pairDevice, TestDevice } from "../support/device.js";
import { usePlatform } from "../support/platform.js";
import {
  auditRows,
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

const t = usePlatform({ services: ["bot"] });
let run: ReturnType<typeof botCall>;
beforeAll(async () => {
  run = botCall(t, await runToken(t));
});

describe("dispatch (POST /jobs)", () => {
  it("sends the frame to the device, and its ack, start, output and exit make the job and its bot.job.* events", async () => {
    const { robot, paired, device } = await linkedDevice(t);
    const body = dispatchBody({ node_id: paired.deviceId, subject: "usr_runner1" });
    const answer = await run("POST", "/jobs", body);
    expect(answer.status).toBe(201);
    expect(answer.body.job).toMatchObject({
      id: body.id,
      node_id: paired.deviceId,
      robot_id: robot.id,
      project_id: "prj_1",
      subject: "usr_runner1",
      provider: "run",
      state: "DISPATCH_STATE_DISPATCHED",
      job: { class: "function", artifact: "echo", args: { text: "hello" }, ttl_ms: "60000" },
      cancel_requested: false,
    });
    const frame = await device.next("job");
    expect(frame).toMatchObject({ jobId: body.id, mediaUrl: "", job: { class: "function", artifact: "echo" } });
    device.ack(body.id);
    device.started(body.id);
    device.output(body.id, 1, "hello\n");
    device.output(body.id, 2, "warn\n", OutputStream.STDERR);
    // A chunk sent again (after a reconnect) is applied once.
    device.output(body.id, 1, "hello\n");
    device.exit(body.id, { code: 0 });
    const job = await jobIn(t, body.id, "DISPATCH_STATE_ENDED");
    expect(job).toMatchObject({ stdout: "hello\n", stderr: "warn\n", exit: { reason: "EXIT_REASON_COMPLETED" } });
    for (const at of ["dispatched_at", "received_at", "started_at", "ended_at"]) expect(job[at]).toBeDefined();
    const events = await jobEvents(t, body.id);
    expect(events.map((event) => [event.subject, event.seq])).toEqual([
      ["bot.job.received", "1"],
      ["bot.job.started", "2"],
      ["bot.job.output", "3"],
      ["bot.job.output", "4"],
      ["bot.job.ended", "5"],
    ]);
    expect(events[2]).toMatchObject({ stream: "OUTPUT_STREAM_STDOUT", text: "hello\n", project_id: "prj_1" });
    expect(events[4]).toMatchObject({ exit: { reason: "EXIT_REASON_COMPLETED" }, node_id: paired.deviceId });
    expect(await auditRows(t, robot.id)).toContainEqual({ action: "job_dispatched", actor: "svc:run" });
  });

  it("applies the reports a device sent together in one transaction, in their order", async () => {
    const { paired, device } = await linkedDevice(t);
    const body = dispatchBody({ node_id: paired.deviceId });
    expect((await run("POST", "/jobs", body)).status).toBe(201);
    await device.next("job");
    device.ack(body.id);
    device.started(body.id);
    device.output(body.id, 1, "hello\n");
    device.exit(body.id, { code: 0 });
    await jobIn(t, body.id, "DISPATCH_STATE_ENDED");
    // Rows one transaction wrote share its id (xmin): one commit for the four, not one after another.
    const em = t.platform.contexts.get("bot")!.orm.em;
    const rows = await em
      .getConnection()
      .execute<{ subject: string; tx: string }[]>(
        `select subject, xmin::text as tx from ${qualified(em, "outbox")} where payload like ? and subject like 'bot.job.%' order by id`,
        [`%${body.id}%`],
      );
    expect(rows.map((row) => row.subject)).toEqual([
      "bot.job.received",
      "bot.job.started",
      "bot.job.output",
      "bot.job.ended",
    ]);
    expect(new Set(rows.map((row) => row.tx)).size).toBe(1);
  });

  it("with no node_id, goes to an online device advertising the class", async () => {
    const { paired, device } = await linkedDevice(t, { classes: ["rare-class-1"] });
    const body = dispatchBody({ job: jobFrame({ class: "rare-class-1" }) });
    const answer = await run("POST", "/jobs", body);
    expect(answer.body.job.node_id).toBe(paired.deviceId);
    expect((await device.next("job")).jobId).toBe(body.id);
  });

  it("is idempotent by job id: the same dispatch answers the first (200), another under that id is 409", async () => {
    const { paired, device } = await linkedDevice(t);
    const body = dispatchBody({ node_id: paired.deviceId, job: jobFrame({ args: { a: 1, b: { c: 2, d: 3 } } }) });
    expect((await run("POST", "/jobs", body)).status).toBe(201);
    // The same request, its args' keys in another order.
    const again = await run("POST", "/jobs", { ...body, job: jobFrame({ args: { b: { d: 3, c: 2 }, a: 1 } }) });
    expect(again.status).toBe(200);
    expect(again.body.job.id).toBe(body.id);
    const other = await run("POST", "/jobs", { ...body, job: jobFrame({ ttl_ms: 5_000 }) });
    expect(other.body).toMatchObject({ status: 409, code: "idempotency.mismatch" });
    // The device got one frame.
    await device.next("job");
    device.close();
    await device.ended;
    expect(device.frames.filter((frame) => frame.frame.case === "job")).toHaveLength(1);
  });

  it("answers dispatches of one job id made at once as one: one 201, the rest 200 with that job, one frame", async () => {
    const { robot, paired, device } = await linkedDevice(t);
    const body = dispatchBody({ node_id: paired.deviceId });
    const answers = await Promise.all(Array.from({ length: 6 }, () => run("POST", "/jobs", body)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    for (const answer of answers) expect(answer.body.job).toMatchObject({ id: body.id, node_id: paired.deviceId });
    await device.next("job");
    device.close();
    await device.ended;
    expect(device.frames.filter((frame) => frame.frame.case === "job")).toHaveLength(1);
    expect((await auditRows(t, robot.id)).filter((row) => row.action === "job_dispatched")).toHaveLength(1);
  });

  it("answers two different dispatches of one job id made at once: one 201, the other 409 idempotency.mismatch", async () => {
    const { paired, device } = await linkedDevice(t);
    const body = dispatchBody({ node_id: paired.deviceId });
    const answers = await Promise.all([
      run("POST", "/jobs", body),
      run("POST", "/jobs", { ...body, job: jobFrame({ ttl_ms: 5_000 }) }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
    expect(answers.find((answer) => answer.status === 409)!.body).toMatchObject({ code: "idempotency.mismatch" });
    await device.next("job");
    device.close();
    await device.ended;
    expect(device.frames.filter((frame) => frame.frame.case === "job")).toHaveLength(1);
  });

  it("needs project_id (422 bot.project_required)", async () => {
    const answer = await run("POST", "/jobs", { ...dispatchBody(), project_id: "" });
    expect(answer.body).toMatchObject({ status: 422, code: "bot.project_required" });
  });

  it("answers 409 bot.class_unadvertised when the device (or every online device) does not advertise the class", async () => {
    const { paired } = await linkedDevice(t, { classes: ["function"] });
    const named = await run(
      "POST",
      "/jobs",
      dispatchBody({ node_id: paired.deviceId, job: jobFrame({ class: "code" }) }),
    );
    expect(named.body).toMatchObject({ status: 409, code: "bot.class_unadvertised", class: "code" });
    const anywhere = await run("POST", "/jobs", dispatchBody({ job: jobFrame({ class: "nobody-runs-this" }) }));
    expect(anywhere.body).toMatchObject({ status: 409, code: "bot.class_unadvertised" });
  });

  it("answers a device that is not paired (unknown, revoked) 404 bot.device_not_found", async () => {
    expect((await run("POST", "/jobs", dispatchBody({ node_id: "dev_nothere1" }))).body).toMatchObject({
      status: 404,
      code: "bot.device_not_found",
    });
  });

  it("refuses a frame past the link's 1 MiB (413 bot.frame_too_large)", async () => {
    const { paired } = await linkedDevice(t);
    const client = t.client(BotService, await runToken(t));
    const big = dispatchBody({ node_id: paired.deviceId, job: jobFrame({ args: { blob: "x".repeat(1024 * 1024) } }) });
    const error = await client
      .dispatchJob({
        id: big.id,
        nodeId: paired.deviceId,
        projectId: "prj_1",
        job: {
          class: "function",
          artifact: "echo",
          args: fromJson(ValueSchema, big.job.args),
          ttlMs: 60_000n,
          limits: {},
        },
      })
      .catch((caught: unknown) => caught);
    expect(problemOf(error)).toMatchObject({ status: 413, code: "bot.frame_too_large" });
  });

  it("refuses inputs named twice, `..`, with a path separator, or whose key is a URL or credential (400 naming it)", async () => {
    const input = (name: string, media_key = "AbCdEfGhIjKlMnOpQrStUvWx") => ({
      name,
      media_key,
      size: 1,
      sha256: "a".repeat(64),
    });
    const refused = async (inputs: unknown[]) =>
      (await run("POST", "/jobs", dispatchBody({ job: jobFrame({ inputs }) }))).body;
    expect(await refused([input("a.txt"), input("a.txt")])).toMatchObject({
      status: 400,
      field: "job.inputs[1].name",
    });
    expect(await refused([input("..")])).toMatchObject({ status: 400, field: "job.inputs[0].name" });
    expect(await refused([input("dir/a.txt")])).toMatchObject({ status: 400, field: "job.inputs[0].name" });
    expect(await refused([input("a.txt", "https://evil.example/x?token=abc")])).toMatchObject({
      status: 400,
      field: "job.inputs[0].media_key",
    });
    expect(await refused([input("a.txt", "user:password@host")])).toMatchObject({
      status: 400,
      field: "job.inputs[0].media_key",
    });
  });

  it("needs an artifact for classes function and code (400 naming job.artifact)", async () => {
    const answer = await run("POST", "/jobs", dispatchBody({ job: jobFrame({ artifact: "" }) }));
    expect(answer.body).toMatchObject({ status: 400, field: "job.artifact" });
  });

  it("takes only the job-run service's token: another service, an app, a mod or a person is refused", async () => {
    const body = dispatchBody();
    const as = async (claims: Parameters<typeof t.token>[0]) =>
      (await botCall(t, await t.token(claims))("POST", "/jobs", body)).body;
    const caps = ["bot.job.dispatch"];
    expect(await as({ kind: "service", svc: "tips", caps })).toMatchObject({ code: "auth.service_not_allowed" });
    expect(await as({ kind: "app", app_id: "app1", caps, fp: true })).toMatchObject({ code: "auth.internal_only" });
    expect(await as({ kind: "service", svc: "run", caps, mod: "mod_1" })).toMatchObject({ code: "auth.never_to_mods" });
    expect(await as({ kind: "user", sub: "usr_a1" })).toMatchObject({ code: "auth.internal_only" });
    const delegated = await botCall(t, await runToken(t), { "x-pf-subject": "usr_a1" })("POST", "/jobs", body);
    expect(delegated.body).toMatchObject({ status: 400, code: "auth.acting_subject_refused" });
  });

  it("holds the frame of an offline device and sends it when the device links again", async () => {
    const robot = await robotOf(t);
    const paired = await pairDevice(t, robot.code);
    const first = await TestDevice.connect(t, paired.credential);
    first.close();
    await first.ended;
    const body = dispatchBody({ node_id: paired.deviceId });
    expect((await run("POST", "/jobs", body)).status).toBe(201);
    const again = await TestDevice.connect(t, paired.credential);
    expect((await again.next("job")).jobId).toBe(body.id);
  });
});

describe("read (GET /jobs/{id})", () => {
  it("answers 404 bot.job_not_found for an id never dispatched, and reads only the id", async () => {
    expect((await run("GET", "/jobs/job_never1")).body).toMatchObject({ status: 404, code: "bot.job_not_found" });
    expect((await run("GET", "/jobs/job_never1?job.class=function")).body).toMatchObject({
      status: 400,
      code: "request.invalid",
    });
  });
});

describe("e-stop and dispatch", () => {
  it("refuses a dispatch while the robot's e-stop is latched (409 bot.estop_latched)", async () => {
    const { robot, paired } = await linkedDevice(t);
    const manager = botCall(t, await managerToken(t));
    await manager("POST", `/robots/${robot.id}/estop`);
    const answer = await run("POST", "/jobs", dispatchBody({ node_id: paired.deviceId }));
    expect(answer.body).toMatchObject({ status: 409, code: "bot.estop_latched" });
    await manager("DELETE", `/robots/${robot.id}/estop`);
    expect((await run("POST", "/jobs", dispatchBody({ node_id: paired.deviceId }))).status).toBe(201);
  });

  it("refuses the link of a revoked device with 401 (its code names it)", async () => {
    const { paired, device } = await linkedDevice(t);
    await botCall(t, await managerToken(t))("POST", `/devices/${paired.deviceId}/revoke`, {});
    await device.ended;
    const refused = await TestDevice.connect(t, paired.credential).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: Code.Unauthenticated });
    expect(problemOf(refused)).toMatchObject({ code: "bot.device.credential_invalid" });
  });
});
