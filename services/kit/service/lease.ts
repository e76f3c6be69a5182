import { randomUUID } from "node:crypto";
import type { CommitSignal } from "../db/commits.js";
import { qualified } from "../db/orm.js";
import { outsideCall } from "../runtime/call.js";
import type { ServiceContext, Worker } from "./module.js";

/**
 * How long a job's lease lasts unless its schedule says otherwise. The holder renews it every third while it
 * runs, so it only matters when the holder crashed: another instance takes the job over within this time.
 */
export const JOB_LEASE_MS = 5_000;

/** How often a leased job runs, how long its lease lasts, when its first pass comes, and what commit wakes it. */
export interface LeaseSchedule {
  everyMs: number;
  leaseMs?: number;
  firstAfterMs?: number;
  /** A pass also follows each of the service's commits that marked this (the poll stays the fallback). */
  wakeOn?: CommitSignal;
}

/**
 * A background job (renewal sweep, expiry, schedules) that one instance at a
 * time runs, every `everyMs`: each pass takes the job's lease in PostgreSQL,
 * so two instances never run it at once, and a lease left by a crashed
 * instance lapses after `leaseMs` (`JOB_LEASE_MS` unless set).
 */
export function leasedJob<C extends ServiceContext>(
  name: string,
  schedule: LeaseSchedule | ((ctx: C) => LeaseSchedule),
  run: (ctx: C) => Promise<void>,
): Worker<C> {
  return async (ctx) => {
    const options = typeof schedule === "function" ? schedule(ctx) : schedule;
    const leaseMs = options.leaseMs ?? JOB_LEASE_MS;
    const holder = randomUUID();
    const table = qualified(ctx.orm.em, "leases");
    const connection = ctx.orm.em.getConnection();
    let running: Promise<void> | undefined;
    let again = false;
    const pass = async () => {
      const taken = await connection.execute(
        `insert into ${table} (name, holder, until) values (?, ?, now() + ? * interval '1 millisecond')
         on conflict (name) do update set holder = excluded.holder, until = excluded.until
         where ${table}.until < now()
         returning holder`,
        [name, holder, leaseMs],
      );
      if (taken.length === 0) return;
      // A run longer than the lease keeps it: renewed every third of the lease while it runs.
      const renewal = setInterval(() => {
        void connection
          .execute(`update ${table} set until = now() + ? * interval '1 millisecond' where name = ? and holder = ?`, [
            leaseMs,
            name,
            holder,
          ])
          .catch(() => undefined);
      }, leaseMs / 3);
      try {
        await run(ctx);
      } finally {
        clearInterval(renewal);
        await connection.execute(`update ${table} set until = now() where name = ? and holder = ?`, [name, holder]);
      }
    };
    // One pass at a time; a wake during a pass makes one more after it, so no commit waits for the poll.
    const tick = () => {
      if (running) {
        again = options.wakeOn !== undefined;
        return;
      }
      running = outsideCall(pass)
        .catch((error: unknown) =>
          ctx.logger.error({ err: error, job: name }, "leased job failed; the next pass tries again"),
        )
        .finally(() => {
          running = undefined;
          if (again) {
            again = false;
            tick();
          }
        });
    };
    const timer = setInterval(tick, options.everyMs);
    const unwake = options.wakeOn ? ctx.commits.on(options.wakeOn, tick) : undefined;
    // A long period would otherwise mean no pass at all on instances that restart more often.
    const first = options.firstAfterMs === undefined ? undefined : setTimeout(tick, options.firstAfterMs);
    return async () => {
      unwake?.();
      again = false;
      clearInterval(timer);
      clearTimeout(first);
      await running;
    };
  };
}
