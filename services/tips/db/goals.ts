import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type RequiredEntityData } from "@mikro-orm/postgresql";
import { GoalSchema, type Goal } from "../../../gen/pf/tips/v1/goals_pb.js";
import { sql } from "../../kit/db/sql.js";
import { money } from "../../kit/handler/money.js";
import { problem } from "../../kit/handler/problem.js";
import { goalChanged } from "../events.js";
import { GoalRow, InteractionRow } from "./entities.js";
import { tipPageDocuments } from "./search.js";
import { refreshSearchDocuments } from "../../kit/search-documents/record.js";

/** What counts toward a goal: settled (or externally paid) interactions naming it, in its currency; hidden ones too. */
const COUNTED_STATES = ["settled", "external"];

interface Tally {
  total: bigint;
  count: number;
}

/** The derived totals of goals, from their settled interactions. */
export async function tallies(em: EntityManager, ids: string[]): Promise<Map<string, Tally>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<{ id: string; total: string; count: string }>(
    em,
    `select g.id, coalesce(sum(i.amount), 0) as total, count(i.id) as count
       from {goals} g
       left join {interactions} i on i.goal_id = g.id and i.currency = g.currency and i.payment_state in (${COUNTED_STATES.map(() => "?").join(", ")})
      where g.id in (${ids.map(() => "?").join(", ")})
      group by g.id`,
    [...COUNTED_STATES, ...ids],
  );
  return new Map(rows.map((row) => [row.id, { total: BigInt(row.total), count: Number(row.count) }]));
}

export function goalToProto(row: GoalRow, tally: Tally = { total: 0n, count: 0 }): Goal {
  return create(GoalSchema, {
    id: row.id,
    creator: row.creator,
    title: row.title,
    target: money(row.target, row.currency),
    total: money(tally.total, row.currency),
    public: row.public,
    closed: row.closedAt !== null,
    revision: row.revision,
    description: row.description,
    imageUrl: row.imageUrl,
    order: row.position,
    contributions: tally.count,
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
    closedAt: row.closedAt ? timestampFromDate(row.closedAt) : undefined,
  });
}

/** Goals as read now, with their totals. */
export async function goalsToProto(em: EntityManager, rows: GoalRow[]): Promise<Goal[]> {
  const found = await tallies(
    em,
    rows.map((row) => row.id),
  );
  return rows.map((row) => goalToProto(row, found.get(row.id)));
}

export function goalNotFound() {
  return problem(404, "goal.not_found", "There is no such goal.");
}

/** The goal with this id, anyone's, in any state; null when there is none. */
export function goalById(em: EntityManager, id: string): Promise<GoalRow | null> {
  return em.findOne(GoalRow, { id });
}

/** Who made the goal with this id (reading that column only); undefined when there is none. */
export async function goalOwner(em: EntityManager, id: string): Promise<string | undefined> {
  return (await em.findOne(GoalRow, { id }, { fields: ["creator"] }))?.creator;
}

/** How many open goals a creator keeps (closed ones take no room). */
export function openGoalCount(em: EntityManager, creator: string): Promise<number> {
  return em.count(GoalRow, { creator, closedAt: null });
}

/** A new goal, written by `publishGoal` in the same transaction. */
export function newGoal(em: EntityManager, goal: RequiredEntityData<GoalRow>): GoalRow {
  return em.create(GoalRow, goal);
}

/** The newest `limit` interactions counted toward a goal. */
export function contributionsTo(em: EntityManager, goal: GoalRow, limit: number): Promise<InteractionRow[]> {
  return em.find(
    InteractionRow,
    { goalId: goal.id, currency: goal.currency, paymentState: { $in: COUNTED_STATES } },
    { orderBy: { id: "desc" }, limit },
  );
}

/** A creator's open public goals, in the creator's order: what the public tip page shows. */
export function publicGoalsOf(em: EntityManager, creator: string): Promise<GoalRow[]> {
  return em.find(GoalRow, { creator, public: true, closedAt: null }, { orderBy: { position: "asc", id: "asc" } });
}

/** A goal its creator works on; 404 to anyone else, as if missing (private goals stay unseen). */
export async function findOwnGoal(em: EntityManager, id: string, creator: string, lock = false): Promise<GoalRow> {
  const row =
    id === "" ? null : await em.findOne(GoalRow, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
  if (!row || row.creator !== creator) throw goalNotFound();
  return row;
}

/** Publishes tips.goal.changed for a goal as it is now (after a change in this transaction). */
export async function publishGoal(em: EntityManager, row: GoalRow, at: Date): Promise<Goal> {
  await em.flush();
  const [goal] = await goalsToProto(em, [row]);
  await goalChanged(em, goal, at);
  // The creator's public page shows its open public goals: its search document follows them.
  await refreshSearchDocuments(em, tipPageDocuments, [row.creator], at);
  return goal;
}
