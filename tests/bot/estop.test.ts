import { beforeAll, describe, expect, it } from "vitest";
import { pairDevice, TestDevice } from "../support/device.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { botCall, linkedDevice, managerToken, pairingCode, robotOf } from "./support.js";

const t = usePlatform({ services: ["bot"] });
let as: ReturnType<typeof botCall>;
beforeAll(async () => {
  as = botCall(t, await managerToken(t));
});

describe("e-stop latch (POST /robots/{id}/estop) and clear (DELETE /robots/{id}/estop)", () => {
  it("reaches every connected device of the robot at once, with the service recorded as actor; manage clears it", async () => {
    const { robot, device } = await linkedDevice(t);
    const second = await TestDevice.connect(t, (await pairDevice(t, await pairingCode(t, robot.id))).credential);
    const latch = await botCall(t, await managerToken(t), { "x-pf-subject": robot.owner })(
      "POST",
      `/robots/${robot.id}/estop`,
    );
    expect(latch.status).toBe(200);
    expect(latch.body).toMatchObject({ changed: true, robot: { estop: { latched: true, changed_by: "svc:web" } } });
    expect(latch.body.robot.estop.acting_for).toBe(robot.owner);
    for (const each of [device, second]) expect(await each.next("estop")).toMatchObject({ latched: true });
    // Latched again: nothing changes, nothing is sent.
    expect((await as("POST", `/robots/${robot.id}/estop`)).body.changed).toBe(false);
    // A device linking while it is latched learns it from its welcome.
    const third = await TestDevice.connect(t, (await pairDevice(t, await pairingCode(t, robot.id))).credential);
    expect(third.welcome.estop).toBe(true);
    const clear = await as("DELETE", `/robots/${robot.id}/estop`);
    expect(clear.body).toMatchObject({ changed: true, robot: { estop: { latched: false } } });
    for (const each of [device, second, third]) expect(await each.next("estop")).toMatchObject({ latched: false });
    expect(device.frames.filter((frame) => frame.frame.case === "estop")).toHaveLength(2);
    const audit = await as("GET", `/robots/${robot.id}/audit`);
    const entries = audit.body.audit.entries.filter((entry: { action: string }) => entry.action.startsWith("estop"));
    expect(entries).toMatchObject([
      { action: "estop_cleared", actor: "svc:web" },
      { action: "estop_latched", actor: "svc:web", acting_for: robot.owner },
    ]);
    const subjects = (await outboxEvents(t, "bot", robot.id)).map((event) => event.subject);
    expect(subjects).toEqual(expect.arrayContaining(["bot.robot.estop_latched", "bot.robot.estop_cleared"]));
  });

  it("needs bot.robot.read as well as bot.robot.control; clearing needs bot.robot.manage", async () => {
    const robot = await robotOf(t);
    const control = await t.token({ kind: "service", svc: "web", caps: ["bot.robot.control"] });
    expect((await botCall(t, control)("POST", `/robots/${robot.id}/estop`)).body).toMatchObject({
      status: 403,
      code: "auth.capability_missing",
      capabilities: ["bot.robot.read"],
    });
    const both = await t.token({ kind: "service", svc: "web", caps: ["bot.robot.control", "bot.robot.read"] });
    expect((await botCall(t, both)("POST", `/robots/${robot.id}/estop`)).status).toBe(200);
    expect((await botCall(t, both)("DELETE", `/robots/${robot.id}/estop`)).body).toMatchObject({
      status: 403,
      code: "auth.capability_missing",
    });
  });

  it("a person's own token latches a robot it owns or operates; a viewer is 403, a stranger 404", async () => {
    const robot = await robotOf(t, undefined, {
      operators: [
        { subject: "usr_op7", role: "operator" },
        { subject: "usr_vw7", role: "viewer" },
      ],
    });
    const own = async (person: string) =>
      (await botCall(t, await t.token({ kind: "user", sub: person }))("POST", `/robots/${robot.id}/estop`)).body;
    expect(await own("usr_op7")).toMatchObject({ changed: true, robot: { estop: { changed_by: "usr_op7" } } });
    expect(await own("usr_vw7")).toMatchObject({ status: 403, code: "auth.role_required" });
    expect(await own("usr_nobody7")).toMatchObject({ status: 404, code: "bot.robot_not_found" });
    // Clearing is manage: the operator's own token cannot, the owner's can.
    const clear = async (person: string) =>
      (await botCall(t, await t.token({ kind: "user", sub: person }))("DELETE", `/robots/${robot.id}/estop`)).body;
    expect(await clear("usr_op7")).toMatchObject({ status: 403, code: "auth.role_required" });
    expect(await clear(robot.owner)).toMatchObject({ changed: true });
  });
});
