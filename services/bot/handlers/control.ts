import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  ControlFrameSchema,
  type BotLinkService,
  type ControlCommand,
  type ControlFrame,
} from "../../../gen/pf/bot/v1/link_service_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { newId } from "../../kit/handler/ids.js";
import { invalid, problem, problemOf } from "../../kit/handler/problem.js";
import { outsideCall } from "../../kit/runtime/call.js";
import { rateLimit } from "../../kit/writes/rate-limit.js";
import { actorOf, type Actor } from "../actors.js";
import type { BotContext } from "../context.js";
import { audit } from "../db/audit.js";
import { liveRobot, operatorEntry, robotNotFound, saveRobot } from "../db/robots.js";
import { allowed, CONTROL_ROLES, roleOf, takeTurn, type Role } from "../domain/roles.js";
import { commandEvent } from "../events.js";
import { FrameQueue } from "../links.js";
import { personRole } from "../roles.js";

/** Whom a channel acts for: the person (X-PF-Subject, or a user token's own), and the actor the audit records. */
interface Operating {
  person: string;
  who: Actor;
}

const frame = (init: Parameters<typeof create<typeof ControlFrameSchema>>[1]) => create(ControlFrameSchema, init);

/** 404 for a robot the person holds no role on (as a missing one), 403 where their role drives nothing (a viewer). */
function requireControl(role: Role | undefined): void {
  if (role === undefined) throw robotNotFound();
  if (!CONTROL_ROLES.includes(role))
    throw problem(403, "auth.role_required", `A ${role} does not drive the robot: owner, operator or queue do.`, {
      relation: "bot.robot",
      roles: [...CONTROL_ROLES],
    });
}

/**
 * The operator channel (/control). It opens with `opened` (so the gateway upgrades before the operator names the
 * robot); the operator's first frame names the robot, answered with its e-stop, then each command is answered with
 * its result. The person's role decides (owner, operator, queue; viewers and strangers end the channel 403/404), and
 * every command the rules weigh is audited: refused while the e-stop is latched (bot.estop_latched), outside the
 * person's allowlist (bot.control.not_allowed), while another `queue` operator holds the turn (bot.control.turn);
 * accepted ones are sent to the robot's connected devices (bot.robot.commanded). Past the person's commands a minute
 * (bot.control.limit) a command is refused unaudited.
 */
export function controlHandlers(ctx: BotContext): Pick<ServiceImpl<typeof BotLinkService>, "control"> {
  return {
    async *control(frames, call) {
      const operating = { person: actingPerson(call), who: actorOf(call) };
      const out = new FrameQueue<ControlFrame>(call.signal);
      const listening = { stop: () => {} };
      try {
        yield frame({ frame: { case: "opened", value: { subject: operating.person } } });
        void outsideCall(() => readCommands(ctx, operating, frames, out, listening));
        yield* out;
      } finally {
        listening.stop();
        out.end();
      }
    },
  };
}

async function readCommands(
  ctx: BotContext,
  operating: Operating,
  frames: AsyncIterable<ControlFrame>,
  out: FrameQueue<ControlFrame>,
  listening: { stop: () => void },
): Promise<void> {
  const iterator = frames[Symbol.asyncIterator]();
  let robotId = "";
  try {
    for (;;) {
      const next = await out.orEnded(iterator.next());
      if (next === undefined || next.done) break;
      const sent = next.value;
      if (robotId === "") {
        if (sent.robotId === "") throw invalid("robot_id", "The channel's first frame names the robot.");
        robotId = sent.robotId;
        // Listened to before the robot is read: a latch between the two is heard or read.
        listening.stop = ctx.links.listen(robotId, {
          estop: (latched) => out.push(frame({ robotId, frame: { case: "estop", value: { latched } } })),
          fail: (error) => out.fail(error),
        });
        const em = ctx.orm.em.fork();
        const robot = await liveRobot(em, robotId);
        requireControl(await personRole(em, robotId, operating.person));
        out.push(frame({ robotId, frame: { case: "estop", value: { latched: robot.estopLatched } } }));
      } else if (sent.robotId !== "" && sent.robotId !== robotId)
        throw invalid("robot_id", "A channel drives one robot: open another channel for another robot.");
      if (sent.frame.case === "command") out.push(await commanded(ctx, operating, robotId, sent.frame.value));
      else if (sent.frame.case !== undefined)
        throw invalid("frame", `A ${sent.frame.case} frame is bot's to send, never an operator's.`);
    }
    out.end();
  } catch (error) {
    out.fail(error);
  } finally {
    void Promise.resolve(iterator.return?.()).catch(() => undefined);
  }
}

/** One command, weighed and audited in one transaction with the robot locked (turns and the latch are its state). */
async function commanded(
  ctx: BotContext,
  { person, who }: Operating,
  robotId: string,
  command: ControlCommand,
): Promise<ControlFrame> {
  if (command.argsJson !== "" && !isJson(command.argsJson))
    throw invalid("command.args_json", "A command's arguments are JSON.");
  const at = ctx.clock.now();
  const rule = { name: "bot.control.person", key: `${robotId}:${person}`, limit: ctx.settings.controlPerMinute };
  try {
    return await ctx.transaction(async (em) => {
      await rateLimit(em, [{ ...rule, windowMs: 60_000 }], at);
      const robot = await liveRobot(em, robotId, true);
      const entry = await operatorEntry(em, robotId, person);
      const role = roleOf(robot, person, entry?.role);
      requireControl(role);
      const turn =
        role === "queue"
          ? takeTurn(
              { holder: robot.turnHolder, until: robot.turnUntil ?? null },
              person,
              at,
              ctx.settings.controlTurnMs,
            )
          : undefined;
      const refusal = robot.estopLatched
        ? "bot.estop_latched"
        : entry && !allowed(entry.commands, command.name)
          ? "bot.control.not_allowed"
          : role === "queue" && turn === undefined
            ? "bot.control.turn"
            : "";
      const commandId = newId("cmd");
      if (refusal === "" && turn) {
        robot.turnHolder = turn.holder;
        robot.turnUntil = turn.until;
        await saveRobot(em);
      }
      audit(em, robotId, { action: "command", ...who, target: commandId, detail: command.name, refusal }, at);
      if (refusal === "")
        await commandEvent(em, {
          robotId,
          commandId,
          name: command.name,
          argsJson: command.argsJson,
          subject: person,
          at,
        });
      return frame({ robotId, frame: { case: "result", value: { commandId, accepted: refusal === "", refusal } } });
    });
  } catch (error) {
    if (problemOf(error).code !== "rate.limited") throw error;
    return frame({ robotId, frame: { case: "result", value: { accepted: false, refusal: "bot.control.limit" } } });
  }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
