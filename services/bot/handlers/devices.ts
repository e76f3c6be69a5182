import { wakeAfterCommit } from "../../kit/db/commits.js";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { BotService } from "../../../gen/pf/bot/v1/bot_pb.js";
import { RobotManageResultSchema, RobotReadResultSchema } from "../../../gen/pf/bot/v1/robots_pb.js";
import { pageBefore, pageLimit } from "../../kit/handler/paging.js";
import { problem } from "../../kit/handler/problem.js";
import { actorOf } from "../actors.js";
import type { BotContext } from "../context.js";
import { audit } from "../db/audit.js";
import { deviceById, deviceNotFound, devicesPage, deviceToProto, saveDevices } from "../db/devices.js";
import { openJobsOf, saveJobs } from "../db/jobs.js";
import { liveRobot, robotById } from "../db/robots.js";
import { canceled, endJob } from "../endings.js";
import { deviceEvent } from "../events.js";
import { deviceSecrets } from "./pairing.js";

type DeviceHandlers = Pick<ServiceImpl<typeof BotService>, "revokeDevice" | "rotateDevice" | "listRobotDevices">;

/** Devices: revoke for good, rotate their secrets (both close the device's link at once), list a robot's. */
export function deviceHandlers(ctx: BotContext): DeviceHandlers {
  /** When a device must have been heard from to count as online now. */
  const onlineSince = () => new Date(ctx.clock.now().getTime() - ctx.settings.presenceTimeoutMs);

  /** The device, locked, of a robot not deleted (a deleted robot's devices are gone with it). */
  async function lockedDevice(em: EntityManager, id: string) {
    const device = await deviceById(em, id, true);
    const robot = device && (await robotById(em, device.robotId));
    if (!device || !robot || robot.deletedAt) throw deviceNotFound();
    return device;
  }

  return {
    async revokeDevice(request, call) {
      const who = actorOf(call);
      return ctx.transaction(async (em) => {
        const device = await lockedDevice(em, request.id);
        if (device.status === "revoked")
          return create(RobotManageResultSchema, { device: deviceToProto(device, onlineSince()), changed: false });
        const at = ctx.clock.now();
        device.status = "revoked";
        device.revokedAt = at;
        device.revokeReason = request.reason;
        device.linkId = null;
        device.linkInstance = null;
        await saveDevices(em);
        // Its jobs can no longer be reported: they end here (its link closes with `close`, revoked).
        for (const job of await openJobsOf(em, [device.id]))
          await endJob(em, job, canceled("the device was revoked"), at);
        await saveJobs(em);
        audit(em, device.robotId, { action: "device_revoked", ...who, target: device.id, detail: request.reason }, at);
        const facts = { deviceId: device.id, robotId: device.robotId, actor: who.actor, reason: request.reason, at };
        await deviceEvent(em, "bot.device.revoked", facts);
        wakeAfterCommit(em, () => ctx.links.close(device.id, "revoked"));
        return create(RobotManageResultSchema, { device: deviceToProto(device, onlineSince()), changed: true });
      });
    },

    async rotateDevice(request, call) {
      const who = actorOf(call);
      const secrets = deviceSecrets();
      return ctx.transaction(async (em) => {
        const device = await lockedDevice(em, request.id);
        if (device.status === "revoked")
          throw problem(409, "bot.device_revoked", "This device was revoked for good: pair a new one.");
        const at = ctx.clock.now();
        device.credentialHash = secrets.credentialHash;
        device.publishKeyHash = secrets.publishKeyHash;
        device.rotatedAt = at;
        device.linkId = null;
        device.linkInstance = null;
        await saveDevices(em);
        audit(em, device.robotId, { action: "device_rotated", ...who, target: device.id }, at);
        await deviceEvent(em, "bot.device.rotated", {
          deviceId: device.id,
          robotId: device.robotId,
          actor: who.actor,
          at,
        });
        wakeAfterCommit(em, () => ctx.links.close(device.id, "rotated"));
        return create(RobotManageResultSchema, {
          device: deviceToProto(device, onlineSince()),
          credential: secrets.credential,
          publishKey: secrets.publishKey,
          changed: true,
        });
      });
    },

    async listRobotDevices(request) {
      const limit = pageLimit(request.limit);
      const em = ctx.orm.em.fork();
      await liveRobot(em, request.id);
      const { items, nextBefore } = pageBefore(await devicesPage(em, request.id, request.before, limit + 1), limit);
      const since = onlineSince();
      return create(RobotReadResultSchema, {
        result: { case: "devices", value: { devices: items.map((row) => deviceToProto(row, since)), nextBefore } },
      });
    },
  };
}
