import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { GoalResultSchema } from "../../../gen/pf/tips/v1/goals_pb.js";
import type { TipsService } from "../../../gen/pf/tips/v1/tips_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { requireBelowCap } from "../../kit/writes/caps.js";
import { newId } from "../../kit/handler/ids.js";
import { requireAmount } from "../../kit/handler/money.js";
import { invalid } from "../../kit/handler/problem.js";
import { checkRevision, ifMatchOf } from "../../kit/handler/revisions.js";
import type { TipsContext } from "../context.js";
import { contributionsTo, findOwnGoal, goalsToProto, newGoal, openGoalCount, publishGoal } from "../db/goals.js";
import { interactionToProto } from "../db/interactions.js";
import { requireImageUrl, requireOpen } from "../domain/goals.js";

type GoalHandlers = Pick<ServiceImpl<typeof TipsService>, "createGoal" | "getGoal" | "updateGoal" | "closeGoal">;

/** Goals of the acting creator: create, read with contributions, edit with revision checks, close. */
export function goalHandlers(ctx: TipsContext): GoalHandlers {
  return {
    async createGoal(request, call) {
      const creator = actingPerson(call);
      // Title and description are held to the contract's rules (1 to 120 characters not blank, at most 2000).
      const title = request.title.trim();
      const target = requireAmount("target", request.target);
      const description = request.description;
      const imageUrl = requireImageUrl(request.imageUrl);
      const limit = ctx.settings.goalsPerCreator;
      return ctx.transaction(async (em) => {
        // Closed goals keep their history and take no room: only open ones count.
        await requireBelowCap(
          em,
          {
            name: "tips.goals",
            owner: creator,
            limit,
            code: "goal.limit",
            detail: `A creator keeps at most ${limit} open goals; close one to make room.`,
          },
          () => openGoalCount(em, creator),
        );
        const at = ctx.clock.now();
        const row = newGoal(em, {
          id: newId("gol"),
          creator,
          title,
          description,
          imageUrl,
          position: request.order,
          public: request.public ?? true,
          currency: target.currency,
          target: target.amount,
          revision: 1n,
          createdAt: at,
          updatedAt: at,
          closedAt: null,
        });
        return create(GoalResultSchema, { goal: await publishGoal(em, row, at) });
      });
    },

    async getGoal(request, call) {
      const creator = actingPerson(call);
      const em = ctx.orm.em.fork();
      const row = await findOwnGoal(em, request.id, creator);
      const [goal] = await goalsToProto(em, [row]);
      const contributions = await contributionsTo(em, row, 200);
      return create(GoalResultSchema, { goal, contributions: contributions.map(interactionToProto) });
    },

    async updateGoal(request, call) {
      const creator = actingPerson(call);
      const ifMatch = ifMatchOf(call);
      const title = request.title?.trim();
      const target = request.target === undefined ? undefined : requireAmount("target", request.target);
      const description = request.description;
      const imageUrl = request.imageUrl === undefined ? undefined : requireImageUrl(request.imageUrl);
      return ctx.transaction(async (em) => {
        const row = await findOwnGoal(em, request.id, creator, true);
        requireOpen(row);
        checkRevision(row.revision, request.expectedRevision, ifMatch);
        if (target && target.currency !== row.currency)
          throw invalid("target.currency", `This goal counts ${row.currency}: its target stays in it.`);
        const at = ctx.clock.now();
        Object.assign(row, {
          title: title ?? row.title,
          target: target?.amount ?? row.target,
          description: description ?? row.description,
          imageUrl: imageUrl ?? row.imageUrl,
          position: request.order ?? row.position,
          revision: row.revision + 1n,
          updatedAt: at,
        });
        return create(GoalResultSchema, { goal: await publishGoal(em, row, at) });
      });
    },

    async closeGoal(request, call) {
      const creator = actingPerson(call);
      return ctx.transaction(async (em) => {
        const row = await findOwnGoal(em, request.id, creator, true);
        requireOpen(row);
        const at = ctx.clock.now();
        Object.assign(row, { closedAt: at, revision: row.revision + 1n, updatedAt: at });
        return create(GoalResultSchema, { goal: await publishGoal(em, row, at) });
      });
    },
  };
}
