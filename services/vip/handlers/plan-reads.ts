import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  PlanListResultSchema,
  PlanListSchema,
  PlanStatus,
  PlanVersionListSchema,
  VersionState,
} from "../../../gen/pf/vip/v1/plans_pb.js";
import type { VipService } from "../../../gen/pf/vip/v1/vip_pb.js";
import { callerOf } from "../../kit/auth/principal.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { problem } from "../../kit/handler/problem.js";
import type { VipContext } from "../context.js";
import { hotPlanRows, readPlan, readPlanPage } from "../db/plan-reads.js";
import { planToProto, planViews, versionToProto } from "../db/plans.js";
import { publicViewerOf, requireOwner, seesAllOf, type Viewer } from "../domain/access.js";
import { PLAN_STATUS, type Status } from "../domain/plans.js";

type PlanReadHandlers = Pick<
  ServiceImpl<typeof VipService>,
  "listPlans" | "getCreator" | "getPlan" | "listPlanVersions"
>;

const STATUS_NAMES = Object.fromEntries(Object.entries(PLAN_STATUS).map(([name, value]) => [value, name])) as Record<
  PlanStatus,
  Status
>;

/** An owner filter: a creator (usr_) or the network; "" for any. */
export function ownerFilter(field: string, owner: string): string | undefined {
  if (owner === "") return undefined;
  return requireOwner(field, owner);
}

/**
 * Plan reads: public for published plans; the grant (and the owner, for theirs) adds drafts and archived plans.
 * Read often (creator pages, plan pages): every read is a hot read (db/plan-reads.ts).
 */
export function planReadHandlers(ctx: VipContext): PlanReadHandlers {
  async function list(
    viewer: Viewer,
    owner: string | undefined,
    status: PlanStatus,
    limit: number | undefined,
    cursor: string,
  ) {
    // status is a value PlanStatus defines (the contract's rule).
    const size = pageLimit(limit);
    const before = decodeTextCursor(cursor, 1)?.[0];
    const rows = await readPlanPage(
      ctx,
      viewer,
      {
        owner,
        status: status !== PlanStatus.UNSPECIFIED ? STATUS_NAMES[status] : undefined,
        before: typeof before === "string" ? before : undefined,
      },
      size + 1,
    );
    const { items, nextCursor } = page(rows, size, (row) => [row.id]);
    const views = await planViews(hotPlanRows(ctx), items, false);
    return { plans: views.map((view) => planToProto(view, seesAllOf(viewer, view.row.owner), false)), nextCursor };
  }

  /** A plan the caller may see, or 404 (drafts and archived plans without the grant). */
  async function visiblePlan(viewer: Viewer, id: string) {
    const row = await readPlan(ctx, id);
    if (!row || (row.status !== "published" && !seesAllOf(viewer, row.owner)))
      throw problem(404, "plan.not_found", "There is no such plan.");
    const [view] = await planViews(hotPlanRows(ctx), [row], true);
    return { view, seesAll: seesAllOf(viewer, row.owner) };
  }

  return {
    async listPlans(request, call) {
      const owner = ownerFilter("owner", request.owner);
      const { plans, nextCursor } = await list(
        publicViewerOf(callerOf(call)),
        owner,
        request.status,
        request.limit,
        request.cursor,
      );
      return create(PlanListResultSchema, {
        result: { case: "plans", value: create(PlanListSchema, { plans, nextCursor }) },
      });
    },

    async getCreator(request, call) {
      const creator = requireOwner("ref", request.ref);
      const { plans, nextCursor } = await list(
        publicViewerOf(callerOf(call)),
        creator,
        PlanStatus.UNSPECIFIED,
        request.limit,
        request.cursor,
      );
      return create(PlanListResultSchema, {
        result: { case: "plans", value: create(PlanListSchema, { creator, plans, nextCursor }) },
      });
    },

    async getPlan(request, call) {
      const { view, seesAll } = await visiblePlan(publicViewerOf(callerOf(call)), request.id);
      call.responseHeader.set("etag", `"${view.row.revision}"`);
      return create(PlanListResultSchema, { result: { case: "plan", value: planToProto(view, seesAll, true) } });
    },

    async listPlanVersions(request, call) {
      const size = pageLimit(request.limit);
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const { view, seesAll } = await visiblePlan(publicViewerOf(callerOf(call)), request.id);
      const versions = view.versions
        .map((version) => versionToProto(view, version))
        .filter((v) => seesAll || v.state === VersionState.CURRENT || v.state === VersionState.SUPERSEDED)
        .filter((v) => typeof before !== "number" || v.version < BigInt(before));
      const { items, nextCursor } = page(versions, size, (v) => [Number(v.version)]);
      return create(PlanListResultSchema, {
        result: {
          case: "versions",
          value: create(PlanVersionListSchema, {
            planId: view.row.id,
            status: PLAN_STATUS[view.row.status as Status],
            versions: items,
            nextCursor,
          }),
        },
      });
    },
  };
}
