import type { EntityManager } from "@mikro-orm/postgresql";
import { qualified } from "../../kit/db/orm.js";

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
  const table = qualified(em, "votes");
  const tx = em.getTransactionContext();
  const connection = em.getConnection();
  if (vote.value === 0) {
    await connection.execute(
      `delete from ${table} where thread_id = ? and person = ?`,
      [vote.threadId, vote.person],
      "run",
      tx,
    );
  } else {
    await connection.execute(
      `insert into ${table} (thread_id, person, value, voted_at) values (?, ?, ?, ?)
       on conflict (thread_id, person) do update set value = excluded.value, voted_at = excluded.voted_at`,
      [vote.threadId, vote.person, vote.value, vote.at],
      "run",
      tx,
    );
  }
  const [{ score }]: { score: number }[] = await connection.execute(
    `select coalesce(sum(value), 0)::int as score from ${table} where thread_id = ?`,
    [vote.threadId],
    "all",
    tx,
  );
  return score;
}
