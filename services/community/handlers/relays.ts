import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { type RelayService, RelayResultSchema } from "../../../gen/pf/community/v1/relays_pb.js";
import { requirePublicUrl } from "../../kit/outbound/public-host.js";
import { answerStatus } from "../../kit/handler/status.js";
import type { CommunityContext } from "../context.js";
import { recordModeration } from "../db/moderation.js";
import { deleteRelay, relayById, relayNotFound, relays, relayToProto, saveRelay } from "../db/relays.js";
import { requireReason } from "../domain/text.js";
import { moderatorOf } from "../moderators.js";

type RelayHandlers = Pick<ServiceImpl<typeof RelayService>, "listRelays" | "getRelay" | "putRelay" | "deleteRelay">;

/**
 * Chat-platform relays (designed): moderators administer where community
 * activity is relayed. The webhook URL is sealed and never shown again.
 * Changes are audited. Delivery is not built yet (README).
 */
export function relayHandlers(ctx: CommunityContext): RelayHandlers {
  return {
    async listRelays() {
      const rows = await ctx.transaction((em) => relays(em));
      return create(RelayResultSchema, { relays: rows.map(relayToProto) });
    },

    async getRelay(request) {
      const row = await ctx.transaction((em) => relayById(em, request.id));
      if (!row) throw relayNotFound();
      return create(RelayResultSchema, { relay: relayToProto(row) });
    },

    async putRelay(request, call) {
      const moderator = moderatorOf(call);
      // The contract holds the name, platform and scope to their shapes.
      const id = request.id;
      const webhook = requirePublicUrl("webhook_url", request.webhookUrl).toString();
      const reason = requireReason(request.reason);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const values = {
          platform: request.platform,
          webhookSealed: ctx.sealer.seal(webhook),
          webhookLast4: webhook.slice(-4),
          scope: request.scope,
          enabled: request.enabled,
          updatedAt: at,
        };
        const found = await relayById(em, id);
        const row = await saveRelay(em, found, { id, ...values });
        if (!found) answerStatus(call, 201);
        await recordModeration(em, {
          action: "relay_put",
          target: { service: "community", kind: "relay", id },
          ...moderator,
          reason,
          value: request.enabled ? "enabled" : "disabled",
          status: "applied",
          at,
        });
        return create(RelayResultSchema, { relay: relayToProto(row) });
      });
    },

    async deleteRelay(request, call) {
      const moderator = moderatorOf(call);
      const id = request.id;
      const reason = requireReason(request.reason);
      return ctx.transaction(async (em) => {
        const row = await relayById(em, id);
        if (!row) throw relayNotFound();
        await deleteRelay(em, row);
        await recordModeration(em, {
          action: "relay_delete",
          target: { service: "community", kind: "relay", id },
          ...moderator,
          reason,
          status: "applied",
          at: ctx.clock.now(),
        });
        return create(RelayResultSchema, { relay: relayToProto(row) });
      });
    },
  };
}
