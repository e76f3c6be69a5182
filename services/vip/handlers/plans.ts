import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { PlanResultSchema, type PlanUpdateRequest } from "../../../gen/pf/vip/v1/plans_pb.js";
import type { Money } from "../../../gen/pf/v1/money_pb.js";
import type { VipService } from "../../../gen/pf/vip/v1/vip_pb.js";
import { type Caller, callerOf } from "../../kit/auth/principal.js";
import { requireBelowCap } from "../../kit/writes/caps.js";
import { newId } from "../../kit/handler/ids.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { VipContext } from "../context.js";
import type { PlanRow } from "../db/entities.js";
import {
  addVersion,
  changePlan,
  livePlanCount,
  loadPlans,
  newPlan,
  planById,
  planToProto,
  planVersion,
  publishDraft,
  termsOf,
} from "../db/plans.js";
import { managerOf, ownerForCreate, seesAllOf, viewerOf } from "../domain/access.js";
import { hasChanges, termsFrom, type Changes } from "../domain/plans.js";
import { checkRevision, ifMatchOf } from "../../kit/handler/revisions.js";
import { planChanged, subjects } from "../events.js";

type PlanHandlers = Pick<ServiceImpl<typeof VipService>, "createPlan" | "updatePlan" | "publishPlan" | "archivePlan">;

/** Billing prices every plan from its tier: a price sent is refused, never ignored. */
export function refusePrice(price: Money | undefined): void {
  if (price !== undefined)
    throw problem(400, "vip.price_refused", "Billing prices the plan from its tier: send no price.", {
      field: "price",
    });
}

/**
 * The plan a caller manages, locked: 404 plan.not_found when it does not
 * exist or the caller may not see it, 403 plan.not_owner when the caller sees
 * it but manages it not (another creator's published plan; network plans without staff).
 */
export async function managedPlan(
  em: EntityManager,
  caller: Caller,
  id: string,
): Promise<{ plan: PlanRow; actor: string }> {
  const plan = await planById(em, id, true);
  if (!plan || (plan.status !== "published" && !seesAllOf(viewerOf(caller), plan.owner)))
    throw problem(404, "plan.not_found", "There is no such plan.");
  const actor = managerOf(caller, plan.owner);
  if (!actor)
    throw problem(403, "plan.not_owner", "Only the plan's creator (or staff, for a network plan) manages it.");
  return { plan, actor };
}

/** Plan writes: create, new versions (PATCH), publish, archive. Versions are insert-only; members keep theirs. */
export function planHandlers(ctx: VipContext): PlanHandlers {
  /** The plan with its full history, as its manager sees it; published and archived plans announce themselves. */
  const answer = async (em: EntityManager, plan: PlanRow, call: HandlerContext) => {
    call.responseHeader.set("etag", `"${plan.revision}"`);
    const [view] = await loadPlans(em, [plan], true);
    return create(PlanResultSchema, { plan: planToProto(view, true, true) });
  };
  const announce = async (
    em: EntityManager,
    plan: PlanRow,
    subject: typeof subjects.planPublished | typeof subjects.planArchived,
    at: Date,
  ) => {
    const [view] = await loadPlans(em, [plan], false);
    await planChanged(em, subject, planToProto(view, false, false), at);
  };

  async function change(request: PlanUpdateRequest, call: HandlerContext, publish: boolean) {
    const caller = callerOf(call);
    refusePrice(request.price);
    const changes: Changes = {
      name: request.name,
      description: request.description,
      tier: request.tier,
      perkIds: request.perks?.perkIds,
    };
    if (!hasChanges(changes) && !publish)
      throw invalid("publish", "Send a change (name, description, tier, perks) or publish.");
    const [fromBody, ifMatch] = [request.expectedRevision > 0n ? request.expectedRevision : undefined, ifMatchOf(call)];
    return ctx.transaction(async (em) => {
      const { plan, actor } = await managedPlan(em, caller, request.id);
      checkRevision(BigInt(plan.revision), fromBody, ifMatch);
      if (plan.status === "archived") throw problem(409, "plan.archived", "The plan is archived: it changes no more.");
      const at = ctx.clock.now();
      const draftOf = (version: number | null | undefined) =>
        version == null ? null : planVersion(em, plan.id, version);
      let draft = await draftOf(plan.draftVersion);
      if (hasChanges(changes)) {
        const base = draft ?? (await draftOf(plan.currentVersion))!;
        draft = await addVersion(em, plan, termsFrom(termsOf(base), changes), actor, at, "perks.perk_ids");
      }
      // A published plan publishes each new version at once; a draft plan's draft waits for publish.
      const goesLive = draft !== null && (publish || plan.status === "published");
      if (goesLive) await publishDraft(em, plan, draft!, actor, at);
      await changePlan(em, plan, draft === null ? {} : { revision: BigInt(plan.revision) + 1n, updatedAt: at });
      if (goesLive) await announce(em, plan, subjects.planPublished, at);
      return answer(em, plan, call);
    });
  }

  return {
    async createPlan(request, call) {
      const caller = callerOf(call);
      refusePrice(request.price);
      const owner = ownerForCreate(caller, request.owner);
      const actor = managerOf(caller, owner)!;
      const terms = termsFrom(undefined, {
        name: request.name,
        description: request.description,
        tier: request.tier,
        perkIds: request.perkIds,
      });
      const limit = ctx.settings.plansPerOwner;
      return ctx.transaction(async (em) => {
        // An archived plan sells no more and takes no room; a draft is archived once published.
        await requireBelowCap(
          em,
          {
            name: "vip.plans",
            owner,
            limit,
            code: "plan.limit",
            detail: `An owner keeps at most ${limit} plans that are not archived; archive one to make room (a draft is published first).`,
          },
          () => livePlanCount(em, owner),
        );
        const at = ctx.clock.now();
        const plan = newPlan(em, {
          id: newId("pln"),
          owner,
          status: "draft",
          currentVersion: null,
          draftVersion: null,
          latestVersion: 0,
          revision: 1n,
          createdAt: at,
          updatedAt: at,
          publishedAt: null,
          archivedAt: null,
        });
        const version = await addVersion(em, plan, terms, actor, at, "perk_ids");
        if (request.publish) await publishDraft(em, plan, version, actor, at);
        await changePlan(em, plan);
        if (request.publish) await announce(em, plan, subjects.planPublished, at);
        return answer(em, plan, call);
      });
    },

    updatePlan: (request, call) => change(request, call, request.publish),

    publishPlan: (request, call) => change(request, call, true),

    async archivePlan(request, call) {
      const caller = callerOf(call);
      const [fromBody, ifMatch] = [
        request.expectedRevision > 0n ? request.expectedRevision : undefined,
        ifMatchOf(call),
      ];
      return ctx.transaction(async (em) => {
        const { plan } = await managedPlan(em, caller, request.id);
        checkRevision(BigInt(plan.revision), fromBody, ifMatch);
        if (plan.status === "draft")
          throw problem(
            409,
            "plan.not_published",
            "Only a published plan is archived; a draft has no members to keep.",
          );
        if (plan.status === "published") {
          const at = ctx.clock.now();
          await changePlan(em, plan, {
            status: "archived",
            archivedAt: at,
            updatedAt: at,
            revision: BigInt(plan.revision) + 1n,
          });
          await announce(em, plan, subjects.planArchived, at);
        }
        return answer(em, plan, call);
      });
    },
  };
}
