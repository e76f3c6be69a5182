import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { BotService } from "../../../gen/pf/bot/v1/bot_pb.js";
import {
  RobotManageResultSchema,
  RobotReadResultSchema,
  type RobotManageResult,
} from "../../../gen/pf/bot/v1/robots_pb.js";
import { newId } from "../../kit/handler/ids.js";
import { pageBefore, pageLimit } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { actorOf } from "../actors.js";
import type { BotContext } from "../context.js";
import { audit } from "../db/audit.js";
import { pairedDevicesOf, saveDevices } from "../db/devices.js";
import type { RobotRow } from "../db/entities.js";
import { openJobsOf, saveJobs } from "../db/jobs.js";
import {
  insertRobot,
  liveRobot,
  operatorsOf,
  operatorsOfMany,
  removeOperators,
  robotsPage,
  robotToProto,
  saveRobot,
  setOperators,
} from "../db/robots.js";
import { READ_ROLES } from "../domain/roles.js";
import { checkConfiguration, checkOperators } from "../domain/robots.js";
import { canceled, endJob } from "../endings.js";
import { robotEvent } from "../events.js";
import { issueCode } from "./pairing.js";

type RobotHandlers = Pick<
  ServiceImpl<typeof BotService>,
  "createRobot" | "getRobot" | "listRobots" | "updateRobot" | "deleteRobot"
>;

/** Robots: create (with its pairing code), read, list, update (name, configuration, operators), delete. */
export function robotHandlers(ctx: BotContext): RobotHandlers {
  /** A robot as answered, with its operators. */
  const answered = async (em: EntityManager, row: RobotRow) =>
    robotToProto(row, await operatorsOf(em, row.id), ctx.clock.now());

  return {
    async createRobot(request, call) {
      const who = actorOf(call);
      if (who.ownToken !== undefined && request.owner !== "" && request.owner !== who.ownToken)
        throw problem(403, "bot.owner_required", "A person's own token creates robots for that person only.");
      const owner = request.owner || who.actingFor || who.ownToken || "";
      if (owner === "") throw invalid("owner", "Name the robot's owner: owner, or the person X-PF-Subject names.");
      if (request.name === undefined) throw invalid("name", "A robot needs a name.");
      checkConfiguration(request.configuration);
      checkOperators(owner, request.operators);
      // The code is shown with the first answer only: a retry answers the robot without it (a code is never stored).
      let code: ReturnType<typeof issueCode> | undefined;
      const once = idempotencyOf(call, request, { scope: `robot:${who.actor}:${who.actingFor}` });
      const answer = await ctx.transaction((em) =>
        once.run(em, async () => {
          const at = ctx.clock.now();
          code = issueCode(ctx, at);
          const row = await insertRobot(em, {
            id: newId("rbt"),
            owner,
            name: request.name!.trim(),
            configuration: request.configuration ?? {},
            estopLatched: false,
            estopChangedAt: null,
            estopChangedBy: "",
            estopActingFor: "",
            pairingCodeHash: code.hash,
            pairingCodeExpiresAt: code.expiresAt,
            turnHolder: "",
            turnUntil: null,
            createdAt: at,
            updatedAt: at,
            deletedAt: null,
          });
          await setOperators(em, row.id, request.operators, at);
          audit(em, row.id, { action: "created", ...who, detail: row.name }, at);
          await robotEvent(em, "bot.robot.created", { robotId: row.id, owner, ...who, at });
          return create(RobotManageResultSchema, { robot: await answered(em, row), changed: true });
        }),
      );
      return code ? create(RobotManageResultSchema, { ...answer, pairingCode: code.shown }) : answer;
    },

    async getRobot(request) {
      const em = ctx.orm.em.fork();
      const row = await liveRobot(em, request.id);
      return create(RobotReadResultSchema, { result: { case: "robot", value: await answered(em, row) } });
    },

    async listRobots(request, call) {
      const limit = pageLimit(request.limit);
      const em = ctx.orm.em.fork();
      const reader = actorOf(call).ownToken;
      const filter = { owner: request.owner, before: request.before, reader, roles: READ_ROLES };
      const { items, nextBefore } = pageBefore(await robotsPage(em, filter, limit + 1), limit);
      const operators = await operatorsOfMany(
        em,
        items.map((row) => row.id),
      );
      const now = ctx.clock.now();
      return create(RobotReadResultSchema, {
        result: {
          case: "robots",
          value: {
            robots: items.map((row) => robotToProto(row, operators.get(row.id) ?? [], now)),
            nextBefore,
          },
        },
      });
    },

    async updateRobot(request, call) {
      const who = actorOf(call);
      checkConfiguration(request.configuration);
      return ctx.transaction(async (em) => {
        const row = await liveRobot(em, request.id, true);
        checkOperators(row.owner, request.operators, request.removeOperators);
        const changed = [
          ...(request.name !== undefined ? ["name"] : []),
          ...(request.configuration !== undefined ? ["configuration"] : []),
          ...(request.operators.length + request.removeOperators.length > 0 ? ["operators"] : []),
        ];
        if (changed.length === 0)
          return create(RobotManageResultSchema, { robot: await answered(em, row), changed: false });
        const at = ctx.clock.now();
        if (request.name !== undefined) row.name = request.name.trim();
        if (request.configuration !== undefined) row.configuration = request.configuration;
        row.updatedAt = at;
        await saveRobot(em);
        await setOperators(em, row.id, request.operators, at);
        await removeOperators(em, row.id, request.removeOperators);
        audit(em, row.id, { action: "updated", ...who, detail: changed.join(", ") }, at);
        return create(RobotManageResultSchema, { robot: await answered(em, row), changed: true });
      });
    },

    async deleteRobot(request, call): Promise<RobotManageResult> {
      const who = actorOf(call);
      return ctx.transaction(async (em) => {
        const row = await liveRobot(em, request.id, true);
        const at = ctx.clock.now();
        const reason = request.reason || "the robot was deleted";
        const devices = await pairedDevicesOf(em, row.id);
        for (const device of devices) {
          device.status = "revoked";
          device.revokedAt = at;
          device.revokeReason = reason;
          device.linkId = null;
          device.linkInstance = null;
        }
        await saveDevices(em);
        const jobs = await openJobsOf(
          em,
          devices.map((device) => device.id),
        );
        for (const job of jobs) await endJob(em, job, canceled("the robot was deleted"), at);
        await saveJobs(em);
        row.deletedAt = at;
        row.updatedAt = at;
        row.pairingCodeHash = null;
        row.pairingCodeExpiresAt = null;
        await saveRobot(em);
        audit(em, row.id, { action: "deleted", ...who, detail: request.reason }, at);
        // The links of its devices close wherever they are held (links.ts); their credentials open nothing again.
        await robotEvent(em, "bot.robot.deleted", { robotId: row.id, owner: row.owner, ...who, at });
        return create(RobotManageResultSchema, { robot: await answered(em, row), changed: true });
      });
    },
  };
}
