import { beforeAll, describe, expect, it } from "vitest";
import { problemOf } from "../../services/kit/handler/problem.js";
import { usePlatform } from "../support/platform.js";
import { auditRows, botCall, controlChannel, linkedDevice, managerToken, robotOf } from "./support.js";

// Three commands a minute per person and robot, so the limit is reached in a test.
const t = usePlatform({ services: ["bot"], env: { PF_BOT_CONTROL_PER_MINUTE: "3" } });
let as: ReturnType<typeof botCall>;
beforeAll(async () => {
  as = botCall(t, await managerToken(t));
});
/** A person's own token. */
const own = (person: string) => t.token({ kind: "user", sub: person });
const command = (name: string, argsJson = "") => ({ case: "command" as const, value: { name, argsJson } });

describe("the operator channel (/control)", () => {
  it("opens for the person X-PF-Subject names, answers the robot's e-stop, and sends accepted commands to its devices", async () => {
    const { robot, device } = await linkedDevice(t);
    const channel = await controlChannel(t, await managerToken(t), { "x-pf-subject": robot.owner });
    expect(channel.frames[0].frame).toMatchObject({ case: "opened", value: { subject: robot.owner } });
    channel.send(undefined, { robotId: robot.id });
    expect(await channel.next("estop")).toMatchObject({ latched: false });
    channel.send(command("drive", '{"speed":1}'));
    const result = await channel.next("result");
    expect(result).toMatchObject({ accepted: true, refusal: "" });
    expect(result.commandId).toMatch(/^cmd_/);
    expect(await device.next("command")).toEqual(
      expect.objectContaining({ id: result.commandId, name: "drive", argsJson: '{"speed":1}' }),
    );
    const audit = await as("GET", `/robots/${robot.id}/audit?limit=1`);
    expect(audit.body.audit.entries[0]).toMatchObject({
      action: "command",
      actor: "svc:web",
      acting_for: robot.owner,
      target: result.commandId,
      detail: "drive",
      refusal: "",
    });
    channel.close();
    expect(await channel.ended).toBeUndefined();
  });

  it("refuses commands while the e-stop is latched (audited), and tells the channel when it latches and clears", async () => {
    const { robot, device } = await linkedDevice(t);
    const channel = await controlChannel(t, await own(robot.owner));
    channel.send(undefined, { robotId: robot.id });
    await channel.next("estop");
    await as("POST", `/robots/${robot.id}/estop`);
    expect(await channel.next("estop")).toMatchObject({ latched: true });
    channel.send(command("drive"));
    expect(await channel.next("result")).toMatchObject({ accepted: false, refusal: "bot.estop_latched" });
    await as("DELETE", `/robots/${robot.id}/estop`);
    expect(await channel.next("estop")).toMatchObject({ latched: false });
    channel.send(command("drive"));
    expect(await channel.next("result")).toMatchObject({ accepted: true });
    // The device got only the command sent after the clear.
    await device.next("command");
    expect(device.frames.filter((frame) => frame.frame.case === "command")).toHaveLength(1);
    // Both were weighed and audited: the refused one and the accepted one.
    expect((await auditRows(t, robot.id)).filter((row) => row.action === "command")).toHaveLength(2);
  });

  it("holds an operator to its allowlist (bot.control.not_allowed)", async () => {
    const robot = await robotOf(t, undefined, {
      operators: [{ subject: "usr_al1", role: "operator", commands: ["drive"] }],
    });
    const channel = await controlChannel(t, await own("usr_al1"));
    channel.send(command("drive"), { robotId: robot.id });
    expect(await channel.next("result")).toMatchObject({ accepted: true });
    channel.send(command("self_destruct"));
    expect(await channel.next("result")).toMatchObject({ accepted: false, refusal: "bot.control.not_allowed" });
  });

  it("lets `queue` operators drive in turns (bot.control.turn while another holds it); owners need no turn", async () => {
    const robot = await robotOf(t, undefined, {
      operators: [
        { subject: "usr_qa1", role: "queue" },
        { subject: "usr_qb1", role: "queue" },
      ],
    });
    const first = await controlChannel(t, await own("usr_qa1"));
    const second = await controlChannel(t, await own("usr_qb1"));
    const owner = await controlChannel(t, await own(robot.owner));
    first.send(command("drive"), { robotId: robot.id });
    expect(await first.next("result")).toMatchObject({ accepted: true });
    second.send(command("drive"), { robotId: robot.id });
    expect(await second.next("result")).toMatchObject({ accepted: false, refusal: "bot.control.turn" });
    owner.send(command("drive"), { robotId: robot.id });
    expect(await owner.next("result")).toMatchObject({ accepted: true });
  });

  it("refuses past the person's commands a minute (bot.control.limit), unaudited", async () => {
    const robot = await robotOf(t);
    const channel = await controlChannel(t, await own(robot.owner));
    for (let i = 0; i < 3; i++) {
      channel.send(command("blink"), { robotId: robot.id });
      expect(await channel.next("result")).toMatchObject({ accepted: true });
    }
    channel.send(command("blink"));
    expect(await channel.next("result")).toMatchObject({ accepted: false, refusal: "bot.control.limit" });
    expect((await auditRows(t, robot.id)).filter((row) => row.action === "command")).toHaveLength(3);
  });

  it("ends the channel for a viewer (403), a stranger (404), a first frame without the robot or another robot (400)", async () => {
    const robot = await robotOf(t, undefined, { operators: [{ subject: "usr_vw3", role: "viewer" }] });
    const ended = async (
      person: string,
      frames: [ReturnType<typeof command> | undefined, Record<string, unknown>][],
    ) => {
      const channel = await controlChannel(t, await own(person));
      for (const [frame, rest] of frames) channel.send(frame, rest);
      const { status, code } = problemOf(await channel.ended);
      return { status, code };
    };
    expect(await ended("usr_vw3", [[undefined, { robotId: robot.id }]])).toEqual({
      status: 403,
      code: "auth.role_required",
    });
    expect(await ended("usr_nobody3", [[undefined, { robotId: robot.id }]])).toEqual({
      status: 404,
      code: "bot.robot_not_found",
    });
    expect(await ended(robot.owner, [[command("drive"), {}]])).toEqual({ status: 400, code: "request.invalid" });
    const other = await robotOf(t, robot.owner);
    expect(
      await ended(robot.owner, [
        [undefined, { robotId: robot.id }],
        [command("drive"), { robotId: other.id }],
      ]),
    ).toEqual({ status: 400, code: "request.invalid" });
  });

  it("ends the channel on a command that breaks its rules or whose arguments are not JSON (400)", async () => {
    const robot = await robotOf(t);
    for (const bad of [command("x".repeat(65)), command("drive", "{not json")]) {
      const channel = await controlChannel(t, await own(robot.owner));
      channel.send(bad, { robotId: robot.id });
      expect(problemOf(await channel.ended)).toMatchObject({ status: 400, code: "request.invalid" });
    }
  });

  it("ends the channel with 404 when its robot is deleted", async () => {
    const robot = await robotOf(t);
    const channel = await controlChannel(t, await own(robot.owner));
    channel.send(undefined, { robotId: robot.id });
    await channel.next("estop");
    await as("DELETE", `/robots/${robot.id}`);
    expect(problemOf(await channel.ended)).toMatchObject({ status: 404, code: "bot.robot_not_found" });
  });
});
