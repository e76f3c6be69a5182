import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { randomBytes } from "node:crypto";
import type { BotService } from "../../../gen/pf/bot/v1/bot_pb.js";
import { PairDeviceResultSchema, type BotLinkService } from "../../../gen/pf/bot/v1/link_service_pb.js";
import { PairingCodeSchema, RobotManageResultSchema, type PairingCode } from "../../../gen/pf/bot/v1/robots_pb.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import { actorOf } from "../actors.js";
import type { BotContext } from "../context.js";
import { audit } from "../db/audit.js";
import { insertDevice } from "../db/devices.js";
import { liveRobot, operatorsOf, robotByPairingCode, robotToProto, saveRobot } from "../db/robots.js";
import { CREDENTIAL_PREFIX, formatPairingCode, normalizePairingCode, PUBLISH_KEY_PREFIX } from "../domain/pairing.js";
import { newSecret, secretHash } from "../../kit/auth/secrets.js";
import { deviceEvent } from "../events.js";

/** A new pairing code: what is shown once, and what is stored (its hash and expiry). */
export function issueCode(ctx: BotContext, at: Date): { shown: PairingCode; hash: string; expiresAt: Date } {
  const code = formatPairingCode(randomBytes(10));
  const expiresAt = new Date(at.getTime() + ctx.settings.pairingCodeTtlMs);
  return {
    shown: create(PairingCodeSchema, { code, expiresAt: timestampFromDate(expiresAt) }),
    hash: secretHash(normalizePairingCode(code)),
    expiresAt,
  };
}

/** A device's secrets, shown once: its credential and publish key (32 random bytes each), and their hashes. */
export function deviceSecrets() {
  const credential = newSecret(CREDENTIAL_PREFIX);
  const publishKey = newSecret(PUBLISH_KEY_PREFIX);
  return { credential, publishKey, credentialHash: secretHash(credential), publishKeyHash: secretHash(publishKey) };
}

const invalidCode = () =>
  problem(404, "bot.pairing_code.invalid", "This pairing code is unknown, used or expired; ask for a new one.");

/** Pairing: a robot's one-time code (manage), and a device exchanging it for its id and secrets (anonymous). */
export function pairingHandlers(
  ctx: BotContext,
): Pick<ServiceImpl<typeof BotService>, "issuePairingCode"> & Pick<ServiceImpl<typeof BotLinkService>, "pairDevice"> {
  return {
    async issuePairingCode(request, call) {
      const who = actorOf(call);
      return ctx.transaction(async (em) => {
        const row = await liveRobot(em, request.id, true);
        const at = ctx.clock.now();
        const code = issueCode(ctx, at);
        // One code per robot: a new one replaces an unused one.
        row.pairingCodeHash = code.hash;
        row.pairingCodeExpiresAt = code.expiresAt;
        row.updatedAt = at;
        await saveRobot(em);
        audit(em, row.id, { action: "pairing_code_issued", ...who }, at);
        return create(RobotManageResultSchema, {
          robot: robotToProto(row, await operatorsOf(em, row.id), at),
          pairingCode: code.shown,
          changed: true,
        });
      });
    },

    async pairDevice(request) {
      const secrets = deviceSecrets();
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        // Locked: two devices presenting one code pair one device; the second finds it used.
        const robot = await robotByPairingCode(em, secretHash(normalizePairingCode(request.code)), at);
        if (!robot) throw invalidCode();
        robot.pairingCodeHash = null;
        robot.pairingCodeExpiresAt = null;
        robot.updatedAt = at;
        await saveRobot(em);
        const device = await insertDevice(em, {
          id: newId("dev"),
          robotId: robot.id,
          name: request.name.trim() || "device",
          status: "paired",
          credentialHash: secrets.credentialHash,
          publishKeyHash: secrets.publishKeyHash,
          pairedAt: at,
          rotatedAt: null,
          revokedAt: null,
          revokeReason: "",
          agentVersion: "",
          classes: [],
          artifacts: [],
          caps: null,
          linkId: null,
          linkInstance: null,
          connectedAt: null,
          lastSeenAt: null,
        });
        audit(em, robot.id, { action: "device_paired", actor: device.id, target: device.id }, at);
        await deviceEvent(em, "bot.device.paired", { deviceId: device.id, robotId: robot.id, actor: device.id, at });
        return create(PairDeviceResultSchema, {
          deviceId: device.id,
          robotId: robot.id,
          credential: secrets.credential,
          publishKey: secrets.publishKey,
        });
      });
    },
  };
}
