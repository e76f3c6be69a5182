import { create, toJson, type JsonObject } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { UniqueConstraintViolationException } from "@mikro-orm/postgresql";
import type { DealsService } from "../../../gen/pf/deals/v1/deals_pb.js";
import {
  FlagListSchema,
  FlagOutcome,
  FlagReason,
  FlagResultSchema,
  FlagSchema,
  FlagState,
  ModerationResultSchema,
  ResolvedFlagSchema,
} from "../../../gen/pf/deals/v1/moderation_pb.js";
import { actingPerson, staffActor } from "../../kit/auth/principal.js";
import { decodeTextCursor, DEFAULT_LIMIT, page } from "../../kit/handler/paging.js";
import { problem } from "../../kit/handler/problem.js";
import { rateLimit } from "../../kit/writes/rate-limit.js";
import type { DealsContext } from "../context.js";
import { audit } from "../db/audit.js";
import type { FlagRow } from "../db/entities.js";
import { flagsPage, flagToProto, lockFlag, openFlagOf, raiseFlag, reasonName, resolveFlag } from "../db/flags.js";
import { offerById } from "../db/offers.js";

type FlagHandlers = Pick<ServiceImpl<typeof DealsService>, "flagOffer" | "listFlags" | "resolveFlag">;

/**
 * Flags: a person's report (one open per person and offer, rate-limited),
 * and the moderators' queue: reading and resolving flags, vote-ring flags
 * included. A flag never changes an offer by itself.
 */
export function flagHandlers(ctx: DealsContext): FlagHandlers {
  return {
    async flagOffer(request, call) {
      const person = actingPerson(call);
      // Declared: a reason of the enum other than vote_ring, a note of at most 1000 characters.
      const reason = reasonName(request.reason)!;
      const { note } = request;
      const duplicate = (open: FlagRow) => {
        const flag = toJson(FlagSchema, flagToProto(open), {
          useProtoFieldName: true,
          alwaysEmitImplicit: true,
        }) as JsonObject;
        return problem(409, "flag.duplicate", "You already have an open report on this offer.", { flag });
      };
      try {
        return await ctx.transaction(async (em) => {
          const at = ctx.clock.now();
          // The offer's row lock puts one person's reports on it in order: the second finds the first open.
          await offerById(em, request.id, true);
          await rateLimit(em, [{ name: "deals.flag.person", key: person, ...ctx.settings.flagPerPerson }], at);
          const open = await openFlagOf(em, request.id, person);
          if (open) throw duplicate(open);
          const flag = await raiseFlag(em, { offerId: request.id, reporter: person, reason, note, at });
          return create(FlagResultSchema, { flag });
        });
      } catch (error) {
        // Whatever got past the lock, flags_one_open keeps one open report: the loser answers as any duplicate.
        if (!(error instanceof UniqueConstraintViolationException)) throw error;
        const open = await openFlagOf(ctx.orm.em.fork(), request.id, person);
        if (!open) throw error;
        throw duplicate(open);
      }
    },

    async listFlags(request) {
      // Declared: flag_reason one of the enum's, limit 1-200.
      const reason = request.flagReason === FlagReason.UNSPECIFIED ? undefined : reasonName(request.flagReason);
      const limit = request.limit ?? DEFAULT_LIMIT;
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const state = request.state === FlagState.UNSPECIFIED ? FlagState.OPEN : request.state;
      const resolved = state === FlagState.OPEN ? false : state === FlagState.RESOLVED ? true : undefined;
      const rows = await flagsPage(
        ctx.orm.em.fork(),
        { resolved, reason, offerId: request.offerId },
        before,
        limit + 1,
      );
      const { items, nextCursor } = page(rows, limit, (row) => [row.id]);
      const value = create(FlagListSchema, { flags: items.map(flagToProto), nextCursor });
      return create(ModerationResultSchema, { result: { case: "flags", value } });
    },

    async resolveFlag(request, call) {
      const actor = staffActor(call);
      // Declared: an outcome (dismissed or actioned), a reason of at most 500 characters.
      const outcome = request.outcome === FlagOutcome.DISMISSED ? "dismissed" : "actioned";
      const { reason } = request;
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const row = await lockFlag(em, request.id);
        if (!row) throw problem(404, "flag.not_found", "There is no such flag.");
        if (row.resolvedAt !== null)
          throw problem(409, "flag.resolved", "The flag is already resolved.", { outcome: row.outcome ?? "" });
        await resolveFlag(em, row, { at, by: actor, outcome, reason });
        const entry = await audit(em, {
          action: "resolve_flag",
          offerId: row.offerId,
          flagId: row.id,
          actor,
          reason,
          details: { outcome },
          at,
        });
        const value = create(ResolvedFlagSchema, { flag: flagToProto(row), audit: entry });
        return create(ModerationResultSchema, { result: { case: "flag", value } });
      });
    },
  };
}
