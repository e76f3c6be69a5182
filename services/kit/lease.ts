import { randomUUID } from "node:crypto";
import { qualified } from "./db/orm.js";
import type { ServiceContext, Worker } from "./module.js";

/**
 * A background job (renewal sweep, expiry, schedules) that one instance at a
 * time runs, every `everyMs`: each pass takes the job's lease in PostgreSQL,
 * so two instances never run it at once, and a lease left by a crashed
 * instance lapses after `leaseMs`.
 */
export function leasedJob(name: string, options: { everyMs: number; leaseMs?: number }, run: (ctx: ServiceContext) => Promise<void>): Worker {
  const leaseMs = options.leaseMs ?? Math.max(30_000, options.everyMs * 2);
  return async (ctx) => {
    const holder = randomUUID();
    const table = qualified(ctx.orm.em, "leases");
    const connection = ctx.orm.em.getConnection();
    let running: Promise<void> | undefined;
    const pass = async () => {
      const taken = await connection.execute(
        `insert into ${table} (name, holder, until) values (?, ?, now() + ? * interval '1 millisecond')
         on conflict (name) do update set holder = excluded.holder, until = excluded.until
         where ${table}.until < now()
         returning holder`,
        [name, holder, leaseMs],
      );
      if (taken.length === 0) return;
      try {
        await run(ctx);
      } finally {
        await connection.execute(`update ${table} set until = now() where name = ? and holder = ?`, [name, holder]);
      }
    };
    const timer = setInterval(() => {
      running ??= pass()
        .catch((error: unknown) => ctx.logger.error({ err: error, job: name }, "leased job failed; the next pass tries again"))
        .finally(() => (running = undefined));
    }, options.everyMs);
    return async () => {
      clearInterval(timer);
      await running;
    };
  };
}
