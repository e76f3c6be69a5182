import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  ExternalResultSchema,
  InteractionListResultSchema,
  InteractionResultSchema,
  InteractionRole,
  MediaQueueResultSchema,
  type ExternalRequest,
} from "../../../gen/pf/tips/v1/interactions_pb.js";
import type { TipsService } from "../../../gen/pf/tips/v1/tips_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { advisoryLock } from "../../kit/db/advisory-lock.js";
import { requireAmount } from "../../kit/handler/money.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { answerStatus } from "../../kit/handler/status.js";
import { requireUser } from "../../kit/handler/subjects.js";
import type { TipsContext } from "../context.js";
import { goalById, goalNotFound, publishGoal } from "../db/goals.js";
import { externalByReference, insertExternal, interactionHistory, mediaQueue } from "../db/interaction-lists.js";
import { findOwnInteraction, interactionToProto, KINDS } from "../db/interactions.js";
import { requireOpen } from "../domain/goals.js";
import { interactionChanged, subjects } from "../events.js";

type InteractionHandlers = Pick<
  ServiceImpl<typeof TipsService>,
  "listInteractions" | "getInteraction" | "recordExternal" | "listMediaQueue"
>;

/** Interaction history (creator and supporter sides), external tips and the media queue. */
export function interactionHandlers(ctx: TipsContext): InteractionHandlers {
  return {
    async listInteractions(request, call) {
      const person = actingPerson(call);
      const limit = pageLimit(request.limit);
      const after = decodeTextCursor(request.cursor, 1);
      // role and kind are values their enums define (the contract's rules).
      const kind =
        request.kind === 0 ? undefined : Object.entries(KINDS).find(([, value]) => value === request.kind)?.[0];
      const rows = await interactionHistory(
        ctx.orm.em.fork(),
        {
          person,
          asCreator: request.role !== InteractionRole.SUPPORTER,
          asSupporter: request.role !== InteractionRole.CREATOR,
          kind,
        },
        after?.[0],
        limit + 1,
      );
      const { items, nextCursor } = page(rows, limit, (row) => [row.id]);
      return create(InteractionListResultSchema, { interactions: items.map(interactionToProto), nextCursor });
    },

    async getInteraction(request, call) {
      const person = actingPerson(call);
      return create(InteractionResultSchema, {
        interaction: interactionToProto(await findOwnInteraction(ctx.orm.em.fork(), request.id, person)),
      });
    },

    async recordExternal(request, call) {
      const external = validExternal(request);
      return ctx.transaction(async (em) => {
        await advisoryLock(em, `tips.external:${external.provider}:${external.providerRef}`);
        const first = await externalByReference(em, external.provider, external.providerRef);
        if (first) {
          answerStatus(call, 200);
          return create(ExternalResultSchema, { interaction: interactionToProto(first), duplicate: true });
        }
        if (external.goalId) {
          const goal = await goalById(em, external.goalId);
          if (!goal || goal.creator !== external.creator) throw goalNotFound();
          // A closed goal keeps its history: nothing counts toward it after it closed (a provider's late report names no goal).
          requireOpen(goal);
          if (goal.currency !== external.currency)
            throw problem(422, "tips.goal_currency_mismatch", `This goal counts ${goal.currency}.`, {
              field: "amount.currency",
            });
        }
        const at = ctx.clock.now();
        // Never platform money: no billing call, no liability; settled as the provider reported it.
        const row = await insertExternal(em, {
          ...external,
          goalId: external.goalId || null,
          kind: "external",
          mediaUrl: "",
          mediaSeconds: 0,
          method: "external",
          paymentState: "external",
          deliveryState: "delivered",
          moderation: "visible",
          intentId: null,
          transactionId: null,
          createdAt: at,
          updatedAt: at,
          settledAt: at,
        });
        await interactionChanged(em, subjects.interactionSettled, interactionToProto(row), at);
        if (row.goalId) await publishGoal(em, (await goalById(em, row.goalId))!, at);
        return create(ExternalResultSchema, { interaction: interactionToProto(row), duplicate: false });
      });
    },

    async listMediaQueue(request, call) {
      const creator = actingPerson(call);
      const limit = pageLimit(request.limit);
      const after = decodeTextCursor(request.cursor, 2);
      const settledAt = after ? new Date(after[0]) : undefined;
      if (settledAt && Number.isNaN(settledAt.getTime()))
        throw invalid("cursor", "cursor is not one this service issued");
      const rows = await mediaQueue(
        ctx.orm.em.fork(),
        creator,
        after && settledAt ? { settledAt, id: after[1] } : undefined,
        limit + 1,
      );
      const { items, nextCursor } = page(rows, limit, (row) => [row.settledAt!.toISOString(), row.id]);
      return create(MediaQueueResultSchema, { requests: items.map(interactionToProto), nextCursor });
    },
  };
}

function validExternal(request: ExternalRequest) {
  const creator = requireUser("creator", request.creator);
  const amount = requireAmount("amount", request.amount);
  const supporter = request.supporter === "" ? "" : requireUser("supporter", request.supporter);
  return {
    creator,
    provider: request.provider,
    providerRef: request.providerRef,
    currency: amount.currency,
    amount: amount.amount,
    message: request.message,
    supporterName: request.supporterName,
    supporter,
    goalId: request.goalId,
  };
}
