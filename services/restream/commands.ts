import type { EntityManager } from "@mikro-orm/postgresql";
import type { RestreamContext } from "./context.js";
import { insertCommand, type CommandOrder } from "./db/commands.js";

/** The generations each transaction issued commands to, told once it commits (`commandTransaction`). */
const issued = new WeakMap<EntityManager, Set<string>>();

/** The key a generation's WatchCommands streams listen under (`ctx.commands`). */
export function commandsKey(workerId: string, generation: number): string {
  return `${workerId}/${generation}`;
}

/**
 * Queues a command in the caller's transaction (worker_commands) and, once it commits, wakes this process's
 * WatchCommands stream of that generation when the transaction is a `commandTransaction`; a stream elsewhere (or
 * of another transaction) finds it on its next look.
 */
export async function issueCommand(ctx: RestreamContext, em: EntityManager, order: CommandOrder): Promise<void> {
  await insertCommand(em, order, ctx.clock.now());
  let keys = issued.get(em);
  if (!keys) issued.set(em, (keys = new Set()));
  keys.add(commandsKey(order.workerId, order.generation));
}

/**
 * `ctx.transaction(work)`, then the wake of the WatchCommands streams of every generation it issued a command to:
 * after the commit, so a woken stream finds the command (a wake before it would find nothing and wait for its
 * next look).
 */
export async function commandTransaction<T>(ctx: RestreamContext, work: (em: EntityManager) => Promise<T>): Promise<T> {
  let keys: ReadonlySet<string> = new Set();
  const result = await ctx.transaction(async (em) => {
    const answer = await work(em);
    keys = issued.get(em) ?? new Set();
    return answer;
  });
  for (const key of keys) ctx.commands.tell(key);
  return result;
}
