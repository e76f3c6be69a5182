import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import { Code, ConnectError } from "@connectrpc/connect";
import { commitWithin, currentCall } from "../runtime/call.js";
import { openWritesBeforeCommit, writtenBeforeCommit } from "./commits.js";

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
    refuseExpired();
    const em = orm.em.fork();
    // Its statements end at the call's deadline, bound as it begins (shared-pool-driver.ts).
    await em.begin();
    openWritesBeforeCommit(em);
    try {
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

/** A call whose deadline has passed begins nothing (one begun in a call is bound to it: shared-pool-driver.ts). */
function refuseExpired(): void {
  const call = currentCall();
  if (call && call.deadline <= Date.now()) throw new ConnectError("the call's deadline passed", Code.DeadlineExceeded);
}
