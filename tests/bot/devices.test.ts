import { Code } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { pairDevice, TestDevice } from "../support/device.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { botCall, linkedDevice, managerToken, pairingCode, robotOf } from "./support.js";

const clock = new ManualClock(new Date());
const t = usePlatform({ services: ["bot"], clock });
let as: ReturnType<typeof botCall>;
beforeAll(async () => {
  as = botCall(t, await managerToken(t));
});

describe("pairing (POST /robots/{id}/pairing-code, POST /devices/pair)", () => {
  it("pairs a device once with the robot's code: its id, robot, credential and publish key shown once", async () => {
    const robot = await robotOf(t);
    const answer = await t.http("POST", "/bot/api/v1/devices/pair", { body: { code: robot.code, name: "arm pc" } });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({ robot_id: robot.id });
    expect(answer.body.device_id).toMatch(/^dev_[0-9a-z]{26}$/);
    expect(answer.body.credential).toMatch(/^pfdc_[A-Za-z0-9_-]{43}$/);
    expect(answer.body.publish_key).toMatch(/^pfpk_[A-Za-z0-9_-]{43}$/);
    // One use: the same code again is unknown.
    const again = await t.http("POST", "/bot/api/v1/devices/pair", { body: { code: robot.code } });
    expect(again.body).toMatchObject({ status: 404, code: "bot.pairing_code.invalid" });
    // The device is listed, never with a secret or a hash of one.
    const listed = await as("GET", `/robots/${robot.id}/devices`);
    const [device] = listed.body.devices.devices;
    expect(device).toMatchObject({ id: answer.body.device_id, name: "arm pc", status: "DEVICE_STATUS_PAIRED" });
    expect(device.online).toBe(false);
    const text = JSON.stringify(listed.body);
    for (const secret of [answer.body.credential, answer.body.publish_key]) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/hash/i);
    const audit = await as("GET", `/robots/${robot.id}/audit`);
    expect(audit.body.audit.entries[0]).toMatchObject({ action: "device_paired", actor: answer.body.device_id });
  });

  it("takes the code as typed: lower case, without dashes, with look-alike letters", async () => {
    const robot = await robotOf(t);
    const typed = robot.code.toLowerCase().replace(/-/g, " ").replace(/0/g, "o").replace(/1/g, "l");
    expect((await pairDevice(t, typed)).robotId).toBe(robot.id);
  });

  it("a new code replaces an unused one; a code past its 10 minutes is refused", async () => {
    const robot = await robotOf(t);
    const second = await pairingCode(t, robot.id);
    await expect(pairDevice(t, robot.code)).rejects.toMatchObject({ code: Code.NotFound });
    const third = await pairingCode(t, robot.id);
    expect(third).not.toBe(second);
    clock.advance(600_001);
    await expect(pairDevice(t, third)).rejects.toMatchObject({ code: Code.NotFound });
    expect((await as("GET", `/robots/${robot.id}`)).body.robot.pairing_code_expires_at).toBeUndefined();
    expect((await pairDevice(t, await pairingCode(t, robot.id))).robotId).toBe(robot.id);
  });

  it("refuses an unknown code 404 bot.pairing_code.invalid", async () => {
    const answer = await t.http("POST", "/bot/api/v1/devices/pair", { body: { code: "ZZZZ-ZZZZ-ZZZZ-ZZZZ" } });
    expect(answer.body).toMatchObject({ status: 404, code: "bot.pairing_code.invalid" });
  });
});

describe("the device link (BotLinkService.Link)", () => {
  it("sends welcome first, records the hello's advertisement and the device's presence", async () => {
    const { robot, paired, device } = await linkedDevice(t, {
      classes: ["function"],
      caps: { maxTtlMs: 30_000n, slots: 2 },
    });
    expect(device.welcome).toMatchObject({ deviceId: paired.deviceId, robotId: robot.id, estop: false });
    const [listed] = (await as("GET", `/robots/${robot.id}/devices`)).body.devices.devices;
    expect(listed).toMatchObject({
      online: true,
      classes: ["function"],
      artifacts: [{ name: "echo", class: "function" }],
      caps: { max_ttl_ms: "30000", slots: 2 },
    });
    expect(listed.agent_version).toMatch(/^test-device\/1#/);
    device.close();
    expect(await device.ended).toBeUndefined();
    // Its link closed: offline at once.
    const [after] = (await as("GET", `/robots/${robot.id}/devices`)).body.devices.devices;
    expect(after.online).toBe(false);
  });

  it("ends with 400 a device that does not say hello first, or sends a frame that is bot's to send", async () => {
    const robot = await robotOf(t);
    const paired = await pairDevice(t, robot.code);
    const silent = await TestDevice.connect(t, paired.credential, null);
    silent.ack("job_x");
    expect(await silent.ended).toMatchObject({ code: Code.InvalidArgument });
    const rude = await TestDevice.connect(t, paired.credential, null);
    rude.send({ case: "estop", value: { latched: true } });
    expect(await rude.ended).toMatchObject({ code: Code.InvalidArgument });
  });

  it("a second link of the device ends the first", async () => {
    const { paired, device } = await linkedDevice(t);
    const second = await TestDevice.connect(t, paired.credential);
    expect(await device.ended).toBeUndefined();
    second.close();
    await second.ended;
  });
});

describe("revoke (POST /devices/{id}/revoke)", () => {
  it("closes the device's link at once (close, revoked) and refuses its credential from then on (401)", async () => {
    const { robot, paired, device } = await linkedDevice(t);
    const answer = await as("POST", `/devices/${paired.deviceId}/revoke`, { reason: "stolen" });
    const answered = Date.now();
    expect(answer.status).toBe(200);
    // At once: the link has ended, or ends within 100 ms of the revoke's answer (it closes as the revoke commits).
    expect(await device.ended).toBeUndefined();
    expect(Date.now() - answered).toBeLessThan(100);
    expect(answer.body).toMatchObject({
      changed: true,
      device: { id: paired.deviceId, status: "DEVICE_STATUS_REVOKED", revoke_reason: "stolen", online: false },
    });
    expect(device.frames.at(-1)?.frame).toMatchObject({ case: "close", value: { reason: "revoked" } });
    await expect(TestDevice.connect(t, paired.credential)).rejects.toMatchObject({ code: Code.Unauthenticated });
    const refused = await t.http("POST", `/bot/api/v1/devices/${paired.deviceId}/revoke`, {
      token: await managerToken(t),
      body: {},
    });
    expect(refused.body.changed).toBe(false);
    const audit = await as("GET", `/robots/${robot.id}/audit?limit=1`);
    expect(audit.body.audit.entries[0]).toMatchObject({
      action: "device_revoked",
      actor: "svc:web",
      target: paired.deviceId,
      detail: "stolen",
    });
    const events = await outboxEvents(t, "bot", paired.deviceId);
    expect(events.map((event) => event.subject)).toContain("bot.device.revoked");
  });

  it("answers another's device 404 to a person's own token, a viewer 403", async () => {
    const robot = await robotOf(t, undefined, { operators: [{ subject: "usr_vw1", role: "viewer" }] });
    const paired = await pairDevice(t, robot.code);
    const own = async (person: string) =>
      botCall(t, await t.token({ kind: "user", sub: person }))("POST", `/devices/${paired.deviceId}/revoke`, {});
    expect((await own("usr_vw1")).body).toMatchObject({ status: 403, code: "auth.role_required" });
    expect((await own("usr_nobody1")).body).toMatchObject({ status: 404, code: "bot.device_not_found" });
    expect((await own(robot.owner)).body).toMatchObject({ changed: true });
  });
});

describe("rotate (POST /devices/{id}/rotate)", () => {
  it("shows a new credential and publish key once, closes the link, and the old credential opens nothing", async () => {
    const { paired, device } = await linkedDevice(t);
    const answer = await as("POST", `/devices/${paired.deviceId}/rotate`, {});
    expect(answer.status).toBe(200);
    expect(answer.body.credential).toMatch(/^pfdc_/);
    expect(answer.body.credential).not.toBe(paired.credential);
    expect(answer.body.publish_key).not.toBe(paired.publishKey);
    expect(await device.next("close")).toMatchObject({ reason: "rotated" });
    expect(await device.ended).toBeUndefined();
    await expect(TestDevice.connect(t, paired.credential)).rejects.toMatchObject({ code: Code.Unauthenticated });
    const relinked = await TestDevice.connect(t, answer.body.credential);
    expect(relinked.welcome.deviceId).toBe(paired.deviceId);
    relinked.close();
    await relinked.ended;
    // Read back, the device never shows them.
    const listed = await as("GET", `/robots/${paired.robotId}/devices`);
    expect(JSON.stringify(listed.body)).not.toContain(answer.body.credential);
  });

  it("refuses a revoked device (409 bot.device_revoked)", async () => {
    const robot = await robotOf(t);
    const paired = await pairDevice(t, robot.code);
    await as("POST", `/devices/${paired.deviceId}/revoke`, {});
    expect((await as("POST", `/devices/${paired.deviceId}/rotate`, {})).body).toMatchObject({
      status: 409,
      code: "bot.device_revoked",
    });
  });
});

describe("devices of a robot (GET /robots/{id}/devices)", () => {
  it("are listed newest first, paged with limit and before", async () => {
    const robot = await robotOf(t);
    const ids = [(await pairDevice(t, robot.code)).deviceId];
    for (let i = 0; i < 2; i++) ids.push((await pairDevice(t, await pairingCode(t, robot.id))).deviceId);
    const first = await as("GET", `/robots/${robot.id}/devices?limit=2`);
    expect(first.body.devices.devices.map((d: { id: string }) => d.id)).toEqual([ids[2], ids[1]]);
    const rest = await as("GET", `/robots/${robot.id}/devices?limit=2&before=${first.body.devices.next_before}`);
    expect(rest.body.devices).toEqual({ devices: [expect.objectContaining({ id: ids[0] })], next_before: "" });
  });
});
