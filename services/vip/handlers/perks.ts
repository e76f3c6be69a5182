import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { PerkKind, PerkListResultSchema, PerkResultSchema, PerkStatus } from "../../../gen/pf/vip/v1/plans_pb.js";
import type { VipService } from "../../../gen/pf/vip/v1/vip_pb.js";
import type { EntityManager } from "@mikro-orm/postgresql";
import { callerOf } from "../../kit/auth/principal.js";
import { requireBelowCap } from "../../kit/writes/caps.js";
import { newId } from "../../kit/handler/ids.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { VipContext } from "../context.js";
import { readPerkPage } from "../db/plan-reads.js";
import { activePerkCount, changePerk, insertPerk, perkById, perkToProto } from "../db/perks.js";
import { managerOf, ownerForCreate, publicViewerOf, seesAllOf, viewerOf } from "../domain/access.js";
import { kindOf, requireBindings } from "../domain/perks.js";
import { checkRevision, ifMatchOf } from "../../kit/handler/revisions.js";
import { ownerFilter } from "./plan-reads.js";

type PerkHandlers = Pick<ServiceImpl<typeof VipService>, "listPerks" | "createPerk" | "updatePerk">;

/** Perks of creators and of the network: public while active; edits never reach published versions' snapshots. */
export function perkHandlers(ctx: VipContext): PerkHandlers {
  /** Room for one more active perk of the owner (a new one, or a retired one made active again). */
  const requireRoom = (em: EntityManager, owner: string) => {
    const limit = ctx.settings.perksPerOwner;
    return requireBelowCap(
      em,
      {
        name: "vip.perks",
        owner,
        limit,
        code: "perk.limit",
        detail: `An owner keeps at most ${limit} active perks; retire one to make room.`,
      },
      () => activePerkCount(em, owner),
    );
  };

  return {
    async listPerks(request, call) {
      const owner = ownerFilter("owner", request.owner);
      const kind = request.kind === PerkKind.UNSPECIFIED ? undefined : kindOf(request.kind);
      const status =
        request.status === PerkStatus.UNSPECIFIED
          ? undefined
          : request.status === PerkStatus.ACTIVE
            ? "active"
            : "retired";
      const size = pageLimit(request.limit);
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      // A public list (a hot read): active perks; with the grant everything; the owner their own.
      const rows = await readPerkPage(
        ctx,
        publicViewerOf(callerOf(call)),
        { owner, kind, status, before: typeof before === "string" ? before : undefined },
        size + 1,
      );
      const { items, nextCursor } = page(rows, size, (row) => [row.id]);
      return create(PerkListResultSchema, { perks: items.map(perkToProto), nextCursor });
    },

    async createPerk(request, call) {
      const owner = ownerForCreate(callerOf(call), request.owner);
      // kind, name and description are held to the contract's rules (a kind set, a name not blank); stored trimmed.
      const kind = kindOf(request.kind);
      const name = request.name.trim();
      const description = request.description.trim();
      const productBindings = requireBindings("product_bindings", request.productBindings);
      return ctx.transaction(async (em) => {
        await requireRoom(em, owner);
        const at = ctx.clock.now();
        const row = await insertPerk(em, {
          id: newId("prk"),
          owner,
          kind,
          name,
          description,
          productBindings,
          status: "active",
          revision: 1n,
          createdAt: at,
          updatedAt: at,
          retiredAt: null,
        });
        return create(PerkResultSchema, { perk: perkToProto(row) });
      });
    },

    async updatePerk(request, call) {
      const caller = callerOf(call);
      const changes = {
        name: request.name?.trim(),
        description: request.description?.trim(),
        productBindings:
          request.productBindings === undefined
            ? undefined
            : requireBindings("product_bindings.refs", request.productBindings.refs),
      };
      if (Object.values(changes).every((value) => value === undefined) && request.retired === undefined) {
        throw invalid("name", "Send a change: name, description, product_bindings or retired.");
      }
      const [fromBody, ifMatch] = [
        request.expectedRevision > 0n ? request.expectedRevision : undefined,
        ifMatchOf(call),
      ];
      return ctx.transaction(async (em) => {
        const row = await perkById(em, request.id, true);
        if (!row || (row.status !== "active" && !seesAllOf(viewerOf(caller), row.owner)))
          throw problem(404, "perk.not_found", "There is no such perk.");
        if (!managerOf(caller, row.owner))
          throw problem(403, "perk.not_owner", "Only the perk's creator (or staff, for a network perk) manages it.");
        checkRevision(BigInt(row.revision), fromBody, ifMatch);
        if (request.retired === false && row.status === "retired") await requireRoom(em, row.owner);
        const at = ctx.clock.now();
        for (const [field, value] of Object.entries(changes))
          if (value !== undefined) Object.assign(row, { [field]: value });
        if (request.retired !== undefined)
          Object.assign(
            row,
            request.retired
              ? { status: "retired", retiredAt: row.retiredAt ?? at }
              : { status: "active", retiredAt: null },
          );
        await changePerk(em, row, { revision: BigInt(row.revision) + 1n, updatedAt: at });
        call.responseHeader.set("etag", `"${row.revision}"`);
        return create(PerkResultSchema, { perk: perkToProto(row) });
      });
    },
  };
}
