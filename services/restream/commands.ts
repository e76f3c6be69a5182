import type { EntityManager } from "@mikro-orm/postgresql";
import { signalAfterCommit } from "../kit/db/commits.js";
import type { RestreamContext } from "./context.js";
import { insertCommand, type CommandOrder } from "./db/commands.js";

/**
 * Queues a command in the caller's transaction (worker_commands); its commit wakes this process's WatchCommands
 * streams (`"worker-commands"`), and a stream elsewhere finds it on its next look.
 */
export async function issueCommand(ctx: RestreamContext, em: EntityManager, order: CommandOrder): Promise<void> {
  await insertCommand(em, order, ctx.clock.now());
  signalAfterCommit(em, "worker-commands");
}
