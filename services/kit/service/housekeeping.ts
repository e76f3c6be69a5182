import { qualified } from "../db/orm.js";
import { leasedJob } from "./lease.js";
import type { ServiceContext } from "./module.js";

/** How long the kit's bookkeeping rows are kept once they are done with. */
export const RETENTION = {
  /** Sent events: JetStream keeps its own copy a week. */
  sentEventsDays: 7,
  /** Handled-event marks: far longer than any redelivery. */
  inboxDays: 30,
  /** Idempotency keys: a retry within a month gets the first answer. */
  idempotencyDays: 30,
  /** Rate-limit and quota windows, after they end: a day covers any clock skew between instances. */
  rateWindowsDays: 1,
};

/** Removes the kit's rows that are done with: sent events, old inbox marks and idempotency keys, ended rate-limit and quota windows. */
export async function pruneKitTables(ctx: ServiceContext): Promise<void> {
  const connection = ctx.orm.em.getConnection();
  const now = ctx.clock.now();
  const before = (days: number) => new Date(now.getTime() - days * 86_400_000);
  const em = ctx.orm.em;
  await connection.execute(`delete from ${qualified(em, "outbox")} where sent_at < ?`, [
    before(RETENTION.sentEventsDays),
  ]);
  await connection.execute(`delete from ${qualified(em, "inbox")} where handled_at < ?`, [before(RETENTION.inboxDays)]);
  await connection.execute(`delete from ${qualified(em, "idempotency_keys")} where created_at < ?`, [
    before(RETENTION.idempotencyDays),
  ]);
  await connection.execute(`delete from ${qualified(em, "rate_limits")} where ends_at < ?`, [
    before(RETENTION.rateWindowsDays),
  ]);
  // A quota's ended window, unless a reservation still counts in it (it settles or expires there).
  const reservations = qualified(em, "quota_reservations");
  await connection.execute(
    `delete from ${qualified(em, "quota_usage")} u where ends_at < ? and not exists
     (select 1 from ${reservations} r where r.name = u.name and r.key = u.key and r.window_start = u.window_start)`,
    [before(RETENTION.rateWindowsDays)],
  );
}

/** Runs hourly (first a minute or two after start) on one instance of each service; the host starts it for every module. */
export const housekeeping = leasedJob(
  "kit.housekeeping",
  { everyMs: 3_600_000, firstAfterMs: 60_000 + Math.random() * 60_000 },
  pruneKitTables,
);
