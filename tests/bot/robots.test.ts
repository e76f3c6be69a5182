import { beforeAll, describe, expect, it } from "vitest";
import { TestDevice, pairDevice } from "../support/device.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { auditRows, botCall, dispatchBody, fresh, linkedDevice, managerToken, robotOf, runToken } from "./support.js";

const t = usePlatform({ services: ["bot"] });
let as: ReturnType<typeof botCall>;
/** A person's own token. */
const own = async (person: string) => botCall(t, await t.token({ kind: "user", sub: person }));
beforeAll(async () => {
  as = botCall(t, await managerToken(t));
});

describe("create (POST /robots)", () => {
  it("creates a robot for the owner the body names, with a one-time pairing code shown once; audited and published", async () => {
    const owner = `usr_${fresh("o")}`;
    const answer = await as("POST", "/robots", {
      owner,
      name: "  Rover  ",
      configuration: { wheels: 4, camera: { fps: 30 } },
      operators: [{ subject: "usr_op1", role: "operator", commands: ["drive", "stop"] }],
    });
    expect(answer.status).toBe(201);
    const { robot, pairing_code: code } = answer.body;
    expect(robot).toMatchObject({
      owner,
      name: "Rover",
      configuration: { wheels: 4, camera: { fps: 30 } },
      operators: [{ subject: "usr_op1", role: "operator", commands: ["drive", "stop"] }],
      estop: { latched: false },
      pairing_code_expires_at: code.expires_at,
    });
    expect(robot.id).toMatch(/^rbt_[0-9a-z]{26}$/);
    expect(code.code).toMatch(/^[0-9A-Z]{4}(-[0-9A-Z]{4}){3}$/);
    // Ten minutes from now, by the service's clock.
    expect(Date.parse(code.expires_at) - Date.parse(robot.created_at)).toBe(600_000);
    // Read back, the code is never there, only when it expires.
    const read = await as("GET", `/robots/${robot.id}`);
    expect(JSON.stringify(read.body)).not.toContain(code.code);
    expect(read.body.robot.pairing_code_expires_at).toBe(code.expires_at);
    const audit = await as("GET", `/robots/${robot.id}/audit`);
    expect(audit.body.audit.entries).toMatchObject([{ action: "created", actor: "svc:web", detail: "Rover" }]);
    const events = await outboxEvents(t, "bot", robot.id);
    expect(events.map((event) => event.subject)).toContain("bot.robot.created");
  });

  it("creates for the person X-PF-Subject names, recorded as whom the service acted for", async () => {
    const owner = `usr_${fresh("s")}`;
    const answer = await botCall(t, await managerToken(t), { "x-pf-subject": owner })("POST", "/robots", {
      name: "Arm",
    });
    expect(answer.status).toBe(201);
    expect(answer.body.robot.owner).toBe(owner);
    const audit = await as("GET", `/robots/${answer.body.robot.id}/audit`);
    expect(audit.body.audit.entries[0]).toMatchObject({ actor: "svc:web", acting_for: owner });
  });

  it("a person's own token creates for that person only (403 bot.owner_required for another)", async () => {
    const person = `usr_${fresh("p")}`;
    const mine = await (await own(person))("POST", "/robots", { name: "Mine" });
    expect(mine.status).toBe(201);
    expect(mine.body.robot.owner).toBe(person);
    const theirs = await (await own(person))("POST", "/robots", { name: "Theirs", owner: "usr_other1" });
    expect(theirs.body).toMatchObject({ status: 403, code: "bot.owner_required" });
  });

  it("refuses a robot without owner or name (400 naming it), the owner as an operator, and a person named twice", async () => {
    expect((await as("POST", "/robots", { name: "x" })).body).toMatchObject({ status: 400, field: "owner" });
    expect((await as("POST", "/robots", { owner: "usr_a2" })).body).toMatchObject({ status: 400, field: "name" });
    const owner = await as("POST", "/robots", {
      owner: "usr_a2",
      name: "x",
      operators: [{ subject: "usr_a2", role: "viewer" }],
    });
    expect(owner.body).toMatchObject({ status: 400, field: "operators[0].subject" });
    const twice = await as("POST", "/robots", {
      owner: "usr_a2",
      name: "x",
      operators: [
        { subject: "usr_b2", role: "viewer" },
        { subject: "usr_b2", role: "operator" },
      ],
    });
    expect(twice.body).toMatchObject({ status: 400, field: "operators[1].subject" });
  });

  it("refuses a configuration over 64 KiB (400 naming it)", async () => {
    const big = { blob: "x".repeat(65 * 1024) };
    const answer = await as("POST", "/robots", { owner: "usr_a2", name: "x", configuration: big });
    expect(answer.body).toMatchObject({ status: 400, field: "configuration" });
  });

  it("answers a retry with the same idempotency key with the first robot, without showing its code again", async () => {
    const body = { owner: `usr_${fresh("i")}`, name: "Once", idempotency_key: fresh("k") };
    const first = await as("POST", "/robots", body);
    const again = await as("POST", "/robots", body);
    expect(again.status).toBe(201);
    expect(again.body.robot.id).toBe(first.body.robot.id);
    expect(first.body.pairing_code.code).not.toBe("");
    expect(again.body.pairing_code).toBeUndefined();
    const other = await as("POST", "/robots", { ...body, name: "Twice" });
    expect(other.body).toMatchObject({ status: 409, code: "idempotency.mismatch" });
  });
});

describe("read and list (GET /robots, GET /robots/{id})", () => {
  it("lists the owner's robots newest first, paged with limit and before", async () => {
    const owner = `usr_${fresh("l")}`;
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await robotOf(t, owner)).id);
    const first = await as("GET", `/robots?owner=${owner}&limit=2`);
    expect(first.body.robots.robots.map((robot: { id: string }) => robot.id)).toEqual([ids[2], ids[1]]);
    expect(first.body.robots.next_before).toBe(ids[1]);
    const second = await as("GET", `/robots?owner=${owner}&limit=2&before=${ids[1]}`);
    expect(second.body.robots).toEqual({ robots: [expect.objectContaining({ id: ids[0] })], next_before: "" });
  });

  it("needs ?owner= (400 naming it)", async () => {
    expect((await as("GET", "/robots")).body).toMatchObject({ status: 400, field: "owner" });
  });

  it("holds a person's own token to robots it is owner, operator or viewer on: others 404, a queue role 403", async () => {
    const owner = `usr_${fresh("h")}`;
    const [viewer, queue, stranger] = ["usr_v1", "usr_q1", `usr_${fresh("x")}`];
    const shared = await robotOf(t, owner, {
      operators: [
        { subject: viewer, role: "viewer" },
        { subject: queue, role: "queue" },
      ],
    });
    const hidden = await robotOf(t, owner);
    expect((await (await own(owner))("GET", `/robots/${hidden.id}`)).status).toBe(200);
    expect((await (await own(viewer))("GET", `/robots/${shared.id}`)).status).toBe(200);
    expect((await (await own(viewer))("GET", `/robots/${hidden.id}`)).body).toMatchObject({
      status: 404,
      code: "bot.robot_not_found",
    });
    expect((await (await own(stranger))("GET", `/robots/${shared.id}/devices`)).body).toMatchObject({ status: 404 });
    expect((await (await own(queue))("GET", `/robots/${shared.id}`)).body).toMatchObject({
      status: 403,
      code: "auth.role_required",
    });
    // Listed: the owner sees both, the viewer only the one shared with it.
    const listed = async (person: string) =>
      (await (await own(person))("GET", `/robots?owner=${owner}`)).body.robots.robots.map((r: { id: string }) => r.id);
    expect(await listed(owner)).toEqual([hidden.id, shared.id]);
    expect(await listed(viewer)).toEqual([shared.id]);
    expect(await listed(stranger)).toEqual([]);
  });

  it("answers a missing robot 404 bot.robot_not_found", async () => {
    expect((await as("GET", "/robots/rbt_missing1")).body).toMatchObject({ status: 404, code: "bot.robot_not_found" });
  });
});

describe("update (PATCH /robots/{id})", () => {
  it("renames, reconfigures and adds, changes and removes operators; audited", async () => {
    const robot = await robotOf(t, undefined, { operators: [{ subject: "usr_c1", role: "viewer" }] });
    const answer = await as("PATCH", `/robots/${robot.id}`, {
      name: "Rover II",
      configuration: { wheels: 6 },
      operators: [
        { subject: "usr_c2", role: "queue" },
        { subject: "usr_c3", role: "operator", commands: ["stop"] },
      ],
      remove_operators: ["usr_c1"],
    });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      changed: true,
      robot: {
        name: "Rover II",
        configuration: { wheels: 6 },
        operators: [
          { subject: "usr_c2", role: "queue", commands: [] },
          { subject: "usr_c3", role: "operator", commands: ["stop"] },
        ],
      },
    });
    const audit = await as("GET", `/robots/${robot.id}/audit?limit=1`);
    expect(audit.body.audit.entries[0]).toMatchObject({ action: "updated", detail: "name, configuration, operators" });
    const same = await as("PATCH", `/robots/${robot.id}`, {});
    expect(same.body.changed).toBe(false);
  });

  it("manage with a person's own token is the owner's: an operator is 403, a stranger 404", async () => {
    const robot = await robotOf(t, undefined, { operators: [{ subject: "usr_d1", role: "operator" }] });
    expect((await (await own(robot.owner))("PATCH", `/robots/${robot.id}`, { name: "Mine" })).status).toBe(200);
    expect((await (await own("usr_d1"))("PATCH", `/robots/${robot.id}`, { name: "No" })).body).toMatchObject({
      status: 403,
      code: "auth.role_required",
    });
    expect((await (await own("usr_d9"))("DELETE", `/robots/${robot.id}`)).body).toMatchObject({ status: 404 });
  });

  it("refuses an operator both set and removed, and the owner as an operator (400)", async () => {
    const robot = await robotOf(t);
    const both = await as("PATCH", `/robots/${robot.id}`, {
      operators: [{ subject: "usr_e1", role: "viewer" }],
      remove_operators: ["usr_e1"],
    });
    expect(both.body).toMatchObject({ status: 400, field: "operators[0].subject" });
    const owner = await as("PATCH", `/robots/${robot.id}`, { operators: [{ subject: robot.owner, role: "viewer" }] });
    expect(owner.body).toMatchObject({ status: 400, field: "operators[0].subject" });
  });
});

describe("delete (DELETE /robots/{id})", () => {
  it("is irreversible: its devices are revoked and their links closed, their jobs canceled, its audit kept", async () => {
    const { robot, paired, device } = await linkedDevice(t);
    const body = dispatchBody({ node_id: paired.deviceId });
    const run = botCall(t, await runToken(t));
    expect((await run("POST", "/jobs", body)).status).toBe(201);
    await device.next("job");
    const answer = await as("DELETE", `/robots/${robot.id}?reason=scrapped`);
    expect(answer.status).toBe(200);
    expect(answer.body.robot.deleted_at).toBeDefined();
    // The link closes with `close` (deleted); the credential opens nothing again.
    expect(await device.next("close")).toMatchObject({ reason: "deleted" });
    expect(await device.ended).toBeUndefined();
    await expect(TestDevice.connect(t, paired.credential)).rejects.toMatchObject({ code: 16 });
    const job = await run("GET", `/jobs/${body.id}`);
    expect(job.body.job).toMatchObject({
      state: "DISPATCH_STATE_ENDED",
      exit: { reason: "EXIT_REASON_CANCELED", detail: "the robot was deleted" },
    });
    expect((await as("GET", `/robots/${robot.id}`)).status).toBe(404);
    expect((await as("DELETE", `/robots/${robot.id}`)).status).toBe(404);
    expect((await as("POST", `/robots/${robot.id}/pairing-code`)).status).toBe(404);
    // The audit is kept (read from the database: the robot's routes answer 404 now).
    expect((await auditRows(t, robot.id)).map((row) => row.action)).toEqual([
      "created",
      "device_paired",
      "job_dispatched",
      "deleted",
    ]);
    const events = await outboxEvents(t, "bot", robot.id);
    expect(events.map((event) => event.subject)).toContain("bot.robot.deleted");
  });

  it("makes its unused pairing code useless", async () => {
    const robot = await robotOf(t);
    await as("DELETE", `/robots/${robot.id}`);
    await expect(pairDevice(t, robot.code)).rejects.toMatchObject({ code: 5 });
  });
});
