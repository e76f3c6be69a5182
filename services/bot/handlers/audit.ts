import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { BotService } from "../../../gen/pf/bot/v1/bot_pb.js";
import { RobotReadResultSchema } from "../../../gen/pf/bot/v1/robots_pb.js";
import { pageBefore, pageLimit } from "../../kit/handler/paging.js";
import type { BotContext } from "../context.js";
import { auditPage, auditToProto } from "../db/audit.js";
import { liveRobot } from "../db/robots.js";

/** The command audit: newest first, paged with limit and before. */
export function auditHandlers(ctx: BotContext): Pick<ServiceImpl<typeof BotService>, "listRobotAudit"> {
  return {
    async listRobotAudit(request) {
      const limit = pageLimit(request.limit);
      const em = ctx.orm.em.fork();
      await liveRobot(em, request.id);
      const { items, nextBefore } = pageBefore(await auditPage(em, request.id, request.before, limit + 1), limit);
      return create(RobotReadResultSchema, {
        result: { case: "audit", value: { entries: items.map(auditToProto), nextBefore } },
      });
    },
  };
}
