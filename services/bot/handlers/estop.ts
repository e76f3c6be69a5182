import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { BotService } from "../../../gen/pf/bot/v1/bot_pb.js";
import { RobotControlResultSchema, RobotManageResultSchema } from "../../../gen/pf/bot/v1/robots_pb.js";
import { actorOf } from "../actors.js";
import type { BotContext } from "../context.js";
import { audit } from "../db/audit.js";
import { liveRobot, operatorsOf, robotToProto, saveRobot } from "../db/robots.js";
import { robotEvent } from "../events.js";

/**
 * The e-stop latch: latched by control (with read), cleared by manage. Each change is audited with its actor (the
 * service, and the person it acts for) and published; the instances holding the robot's device links send `estop`
 * at once (links.ts), and dispatch and /control refuse while it is latched.
 */
export function estopHandlers(ctx: BotContext): Pick<ServiceImpl<typeof BotService>, "latchEstop" | "clearEstop"> {
  async function change(id: string, latched: boolean, call: HandlerContext) {
    const who = actorOf(call);
    return ctx.transaction(async (em) => {
      const row = await liveRobot(em, id, true);
      const changed = row.estopLatched !== latched;
      const at = ctx.clock.now();
      if (changed) {
        row.estopLatched = latched;
        row.estopChangedAt = at;
        row.estopChangedBy = who.actor;
        row.estopActingFor = who.actingFor;
        row.updatedAt = at;
        await saveRobot(em);
        audit(em, row.id, { action: latched ? "estop_latched" : "estop_cleared", ...who }, at);
        const subject = latched ? "bot.robot.estop_latched" : "bot.robot.estop_cleared";
        await robotEvent(em, subject, { robotId: row.id, owner: row.owner, ...who, at });
      }
      return { robot: robotToProto(row, await operatorsOf(em, row.id), at), changed };
    });
  }

  return {
    latchEstop: async (request, call) => create(RobotControlResultSchema, await change(request.id, true, call)),
    clearEstop: async (request, call) => create(RobotManageResultSchema, await change(request.id, false, call)),
  };
}
