import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";

/**
 * Sets one person's vote on a thread (0 removes it) and answers the thread's
 * score recounted from its votes. The caller holds the thread's row lock, so
 * votes on one thread apply one at a time and the score is always the sum of
 * the votes; the (thread, person) key keeps one vote per person.
 */
export async function setVote(
  em: EntityManager,
  vote: { threadId: string; person: string; value: -1 | 0 | 1; at: Date },
): Promise<number> {
  if (vote.value === 0) {
    await sql(em, `delete from {votes} where thread_id = ? and person = ?`, [vote.threadId, vote.person]);
  } else {
    await sql(
      em,
      `insert into {votes} (thread_id, person, value, voted_at) values (?, ?, ?, ?)
       on conflict (thread_id, person) do update set value = excluded.value, voted_at = excluded.voted_at`,
      [vote.threadId, vote.person, vote.value, vote.at],
    );
  }
  const [{ score }]: { score: number }[] = await sql(
    em,
    `select coalesce(sum(value), 0)::int as score from {votes} where thread_id = ?`,
    [vote.threadId],
  );
  return score;
}
