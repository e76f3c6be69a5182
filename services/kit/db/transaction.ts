import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { Code, ConnectError } from "@connectrpc/connect";
import { commitWithin, currentCall } from "../runtime/call.js";
import { openWritesBeforeCommit, writtenBeforeCommit } from "./commits.js";
import { sql } from "./sql.js";

const RETRYABLE = new Set(["40001", "40P01"]);

/** A serialization failure or a deadlock: the transaction runs again from its start (`inTransaction`). */
export function retriedWhole(error: unknown): boolean {
  const code = (error as { code?: string } | undefined)?.code;
  return code !== undefined && RETRYABLE.has(code);
}

/**
 * One short transaction on a fresh fork, retried on serialization failures and
 * deadlocks. Its COMMIT runs only if the call's deadline has not passed, so a
 * caller told "deadline exceeded" finds nothing written. Writes left for the
 * commit (`writeBeforeCommit`: the outbox's rows) run after the unit of work's.
 */
export async function inTransaction<T>(
  orm: MikroORM,
  work: (em: EntityManager) => Promise<T>,
  attempts = 5,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const em = orm.em.fork();
    await em.begin();
    openWritesBeforeCommit(em);
    try {
      await boundByDeadline(em);
      const result = await work(em);
      await em.flush();
      await writtenBeforeCommit(em);
      await commitWithin(() => em.commit());
      return result;
    } catch (error) {
      await em.rollback().catch(() => undefined);
      if (attempt >= attempts || !retriedWhole(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
    }
  }
}

/**
 * No statement of the transaction outlives the call's deadline: a wait on a
 * lock ends there (57014, answered 504) and frees the connection, instead of
 * holding it for a caller that has gone.
 */
async function boundByDeadline(em: EntityManager): Promise<void> {
  const call = currentCall();
  if (!call) return;
  const remaining = Math.ceil(call.deadline - Date.now());
  if (remaining <= 0) throw new ConnectError("the call's deadline passed", Code.DeadlineExceeded);
  await sql(em, `set local statement_timeout = ${remaining}`);
}
