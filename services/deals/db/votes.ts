import type { EntityManager, RequiredEntityData } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { VoteRow } from "./entities.js";

/** A person's vote on an offer that still counts, if any. */
export function presentVote(em: EntityManager, offerId: string, voter: string): Promise<VoteRow | null> {
  return em.findOne(VoteRow, { offerId, voter, removedAt: null });
}

/** Takes a vote back: the row stays, removed as of `at`. */
export async function withdrawVote(em: EntityManager, vote: VoteRow, at: Date): Promise<void> {
  vote.removedAt = at;
  await em.flush();
}

/** Writes a new vote. */
export async function castVote(em: EntityManager, vote: RequiredEntityData<VoteRow>): Promise<VoteRow> {
  const row = em.create(VoteRow, vote);
  await em.flush();
  return row;
}

/** Up-votes `from` gives, still counting, to offers `to` submitted, cast after `since` (vote-ring detection). */
export async function upvotesBetween(em: EntityManager, from: string, to: string, since: Date): Promise<number> {
  const [{ count }] = await sql<{ count: string }>(
    em,
    `select count(*) as count from {votes} v join {offers} o on o.id = v.offer_id
     where v.voter = ? and o.submitted_by = ? and v.value = 1 and v.removed_at is null and v.created_at > ?`,
    [from, to, since],
  );
  return Number(count);
}
