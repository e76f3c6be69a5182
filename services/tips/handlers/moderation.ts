import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  ModerationAction,
  ModerationRecordSchema,
  ModerationResultSchema,
  type ModerationRequest,
} from "../../../gen/pf/tips/v1/moderation_pb.js";
import type { TipsService } from "../../../gen/pf/tips/v1/tips_pb.js";
import { actingPerson, principalOf } from "../../kit/auth/principal.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { problem } from "../../kit/handler/problem.js";
import { requireUser } from "../../kit/handler/subjects.js";
import type { TipsContext } from "../context.js";
import type { ModerationRow } from "../db/entities.js";
import { moderationQueue } from "../db/interaction-lists.js";
import { interactionNotFound, interactionToProto, lockInteraction } from "../db/interactions.js";
import { moderateInteraction, moderationLog } from "../db/moderation.js";
import { loadProfile } from "../db/profiles.js";
import { deliveryOnSettle, type InteractionKind } from "../domain/checkouts.js";
import { mayModerate } from "../domain/profiles.js";
import { interactionChanged, subjects } from "../events.js";

type ModerationHandlers = Pick<
  ServiceImpl<typeof TipsService>,
  "hideInteraction" | "restoreInteraction" | "listModerationQueue" | "listModerationLog"
>;

const ACTIONS: Record<string, ModerationAction> = {
  hide: ModerationAction.HIDE,
  restore: ModerationAction.RESTORE,
  hold: ModerationAction.HOLD,
};

export function recordToProto(row: ModerationRow) {
  return create(ModerationRecordSchema, {
    id: row.id,
    interactionId: row.interactionId,
    creator: row.creator,
    action: ACTIONS[row.action],
    actor: row.actor,
    relayedBy: row.relayedBy,
    reason: row.reason,
    createdAt: timestampFromDate(row.createdAt),
  });
}

/**
 * Moderation of paid messages, by the creator or one of the creator's
 * moderators (the acting person a service relays with X-PF-Subject). Hiding
 * and restoring change what is shown, never money or goal totals.
 */
export function moderationHandlers(ctx: TipsContext): ModerationHandlers {
  /** Hides or restores one paid message; a message already so answers unchanged, with no new record. */
  const moderate = (action: "hide" | "restore") => async (request: ModerationRequest, call: HandlerContext) => {
    const actor = actingPerson(call);
    const reason = request.reason;
    return ctx.transaction(async (em) => {
      const row = request.id === "" ? null : await lockInteraction(em, request.id);
      // Someone who may not moderate it learns nothing of it, as if missing (like an interaction read).
      if (!row || row.kind !== "paid_message" || !mayModerate(await loadProfile(em, row.creator), row.creator, actor))
        throw interactionNotFound();
      const wanted = action === "hide" ? "hidden" : "visible";
      if (row.moderation === wanted) return create(ModerationResultSchema, { interaction: interactionToProto(row) });
      const at = ctx.clock.now();
      const record = await moderateInteraction(em, row, {
        action,
        moderation: wanted,
        deliveryState: action === "hide" ? "suppressed" : deliveryOnSettle(row.kind as InteractionKind, "visible"),
        actor,
        relayedBy: principalOf(call).sub,
        reason,
        at,
      });
      const interaction = interactionToProto(row);
      await interactionChanged(
        em,
        action === "hide" ? subjects.interactionHidden : subjects.interactionRestored,
        interaction,
        at,
      );
      return create(ModerationResultSchema, { interaction, record: recordToProto(record) });
    });
  };

  return {
    hideInteraction: moderate("hide"),
    restoreInteraction: moderate("restore"),

    async listModerationQueue(request, call) {
      const { creator, limit, after } = await listing(ctx, request, call);
      const rows = await moderationQueue(ctx.orm.em.fork(), creator, after?.[0], limit + 1);
      const { items, nextCursor } = page(rows, limit, (row) => [row.id]);
      return create(ModerationResultSchema, { queue: items.map(interactionToProto), nextCursor });
    },

    async listModerationLog(request, call) {
      const { creator, limit, after } = await listing(ctx, request, call);
      const rows = await moderationLog(ctx.orm.em.fork(), creator, after?.[0], limit + 1);
      const { items, nextCursor } = page(rows, limit, (row) => [row.id]);
      return create(ModerationResultSchema, { log: items.map(recordToProto), nextCursor });
    },
  };
}

/** The creator whose queue or log is read, by the creator or one of the creator's moderators. */
async function listing(ctx: TipsContext, request: ModerationRequest, call: HandlerContext) {
  const actor = actingPerson(call);
  const creator = requireUser("creator", request.creator);
  await requireModerator(ctx.orm.em.fork(), creator, actor);
  return { creator, limit: pageLimit(request.limit), after: decodeTextCursor(request.cursor, 1) };
}

async function requireModerator(em: EntityManager, creator: string, actor: string) {
  if (!mayModerate(await loadProfile(em, creator), creator, actor)) {
    throw problem(
      403,
      "tips.not_moderator",
      "Only the creator or one of the creator's moderators moderates these paid messages.",
    );
  }
}
