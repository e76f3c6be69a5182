import type { ConnectError } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { qualified } from "../db/orm.js";
import { sql } from "../db/sql.js";
import { newId } from "../handler/ids.js";
import { problem } from "../handler/problem.js";
import type { Clock } from "../runtime/clock.js";

/** A quota per key: at most `limit` units (bytes, cost units, tokens) per fixed window, or held at once. */
export interface Quota {
  /** Its name in the service, e.g. `media.bytes`: named by its refusal, the key of its rows. */
  name: string;
  /** Units one key may hold: reserved and settled together, in a window or (without one) at any time. */
  limit: number;
  /** Fixed windows aligned to this from the epoch ("tokens per hour"); unset, a standing total (storage). */
  windowMs?: number;
  /** A reservation untouched this long is expired by the sweep (`expireReservations`) and its units return. */
  expireAfterMs: number;
  /** The refusal when a reservation would pass the limit; by default the kit's 429 `quota.exceeded`. */
  refused?: (key: string, retryAfterSeconds: number | undefined) => ConnectError;
  /** The answer when the reservation expired before it was grown or settled; by default 408 `request.timeout`. */
  expired?: () => ConnectError;
}

/** What the kit needs of a service context (`ServiceContext`): short transactions and the clock. */
export interface QuotaContext {
  transaction<R>(work: (em: EntityManager) => Promise<R>): Promise<R>;
  clock: Clock;
  /** Where a single statement runs outside a transaction (`spend`); without it, in a short one. */
  orm?: { em: EntityManager };
}

/** Where a reservation's units are counted: its quota's row for its key, in the window it was taken in. */
interface Counter {
  name: string;
  key: string;
  windowStart: Date;
}

/**
 * Reserves `units` of `quota` for `key` (`ahead` instead when the quota leaves that much: reserving ahead of work
 * that grows, as an upload's bytes): refused with the quota's problem when not even `units` fit, counting nothing.
 * In `em` (the caller's transaction) or a short one of its own. The counter's row is locked to the end of that
 * transaction, so concurrent reservations for one key are decided one after the other and never pass the limit
 * together. `holder` names what it is held for (an upload's key): the holder's reservations live and expire
 * together, and the sweep hands it to its `cleanUp`.
 */
export async function reserve(
  ctx: QuotaContext,
  quota: Quota,
  key: string,
  units: number,
  options: { em?: EntityManager; ahead?: number; holder?: string } = {},
): Promise<Reservation> {
  checkUnits(units);
  const at = ctx.clock.now();
  const counter = { name: quota.name, key, windowStart: windowOf(quota, at).start };
  const id = newId("qrs");
  const granted = await within(ctx, options.em, async (em) => {
    const used = await lockCounter(em, quota, counter);
    const granted = grantOf(quota, used, units, options.ahead);
    if (granted === undefined) throw refusal(quota, key, at);
    await count(em, counter, granted);
    await run(
      em,
      `insert into ${qualified(em, "quota_reservations")} (id, name, key, window_start, units, holder, touched_at)
       values (?, ?, ?, ?, ?, ?, ?)`,
      [id, quota.name, key, counter.windowStart, granted, options.holder ?? null, at],
    );
    return granted;
  });
  return new Reservation(ctx, quota, id, counter, granted);
}

/**
 * Counts `units` of `quota` for `key` at once, in one statement: no reservation, no lock held past it. For short
 * work paid up front (a tool's run): refused with the quota's problem, counting nothing, when they do not fit;
 * concurrent spends for one key are decided one after the other on the counter's row and never pass the limit
 * together. In `em` (the caller's transaction) or on its own. `Spent.giveBack` returns them when the work was refused
 * after all; a process lost before it does keeps them counted, never the other way round.
 */
export async function spend(
  ctx: QuotaContext,
  quota: Quota,
  key: string,
  units: number,
  em?: EntityManager,
): Promise<Spent> {
  checkUnits(units);
  const at = ctx.clock.now();
  const { start, end } = windowOf(quota, at);
  const counter = { name: quota.name, key, windowStart: start };
  const statement = async (em: EntityManager) => {
    const table = qualified(em, "quota_usage");
    return run(
      em,
      `insert into ${table} (name, key, window_start, ends_at, used) select ?, ?, ?::timestamptz, ?::timestamptz, ?::bigint where ?::bigint <= ?::bigint
       on conflict (name, key, window_start) do update set used = ${table}.used + excluded.used
       where ${table}.used + excluded.used <= ? returning used`,
      [quota.name, key, start, end ?? null, units, units, quota.limit, quota.limit],
    );
  };
  const rows = em ? await statement(em) : await alone(ctx, statement);
  if (rows.length === 0) throw refusal(quota, key, at);
  return new Spent(ctx, counter, units);
}

/** Units `spend` counted, which `giveBack` returns. */
export class Spent {
  constructor(
    private readonly ctx: QuotaContext,
    private readonly counter: Counter,
    readonly units: number,
  ) {}

  /** Returns the units (once), in `em` or on its own. */
  async giveBack(em?: EntityManager): Promise<void> {
    if (this.returned) return;
    this.returned = true;
    const statement = (em: EntityManager) => count(em, this.counter, -this.units);
    await (em ? statement(em) : alone(this.ctx, statement));
  }

  private returned = false;
}

/** Units of a quota held for a key until settled, released, or expired by the sweep. */
export class Reservation {
  constructor(
    private readonly ctx: QuotaContext,
    readonly quota: Quota,
    readonly id: string,
    private readonly counter: Counter,
    private reserved: number,
  ) {}

  /** What it holds so far. */
  get units(): number {
    return this.reserved;
  }

  /**
   * Reserves `units` more (`ahead` when the quota leaves that much), touching its holder's reservations: refused
   * with the quota's problem, counting nothing, when they do not fit; the quota's `expired` when the sweep took it.
   */
  async more(units: number, options: { em?: EntityManager; ahead?: number } = {}): Promise<void> {
    checkUnits(units);
    const at = this.ctx.clock.now();
    this.reserved += await within(this.ctx, options.em, async (em) => {
      const used = await lockCounter(em, this.quota, this.counter);
      const granted = grantOf(this.quota, used, units, options.ahead);
      if (granted === undefined) throw refusal(this.quota, this.counter.key, at);
      const table = qualified(em, "quota_reservations");
      const [row] = await run(
        em,
        `update ${table} set units = units + ?, touched_at = ? where id = ? and not expired returning holder`,
        [granted, at, this.id],
      );
      if (!row) throw expiredOf(this.quota);
      // A holder's reservations live together: growing one keeps the others from the sweep.
      if (row.holder !== null)
        await run(em, `update ${table} set touched_at = ? where holder = ? and not expired`, [at, row.holder]);
      await count(em, this.counter, granted);
      return granted;
    });
  }

  /**
   * Ends it as `actual` units, in `em` (the transaction writing what it paid for) or one of its own: what it held
   * beyond `actual` returns; more than it held is counted all the same (the work is done), so the next reservation
   * meets it. The quota's `expired` when the sweep took it first.
   */
  async settle(actual: number, em?: EntityManager): Promise<void> {
    checkUnits(actual);
    await within(this.ctx, em, async (em) => {
      await lockCounter(em, this.quota, this.counter);
      const held = await this.take(em);
      if (held === undefined) throw expiredOf(this.quota);
      await count(em, this.counter, actual - held);
    });
  }

  /** Gives back all it holds; nothing when already settled, released or expired. */
  async release(em?: EntityManager): Promise<void> {
    await within(this.ctx, em, async (em) => {
      await lockCounter(em, this.quota, this.counter);
      const held = await this.take(em);
      if (held !== undefined) await count(em, this.counter, -held);
    });
  }

  /** Removes its row unless the sweep took it, answering what it held. */
  private async take(em: EntityManager): Promise<number | undefined> {
    const [row] = await run(
      em,
      `delete from ${qualified(em, "quota_reservations")} where id = ? and not expired returning units`,
      [this.id],
    );
    return row && Number(row.units);
  }
}

/** Expired reservations given back per transaction: a long backlog goes in batches. */
const BATCH = 100;

/**
 * The sweep, for a service's leased job: reservations of `quotas` untouched for their quota's `expireAfterMs` are
 * marked expired (they can no longer grow or settle), with every other reservation of their holder; each holder goes
 * to `cleanUp` (removing what it stood for: it must bear being called again, after a failure), then the units
 * return. A `cleanUp` that fails ends the pass; the next one tries again.
 */
export async function expireReservations(
  ctx: QuotaContext,
  quotas: Quota[],
  cleanUp?: (holder: string) => Promise<void>,
): Promise<void> {
  const now = ctx.clock.now().getTime();
  const byName = new Map(quotas.map((quota) => [quota.name, quota]));
  const names = quotas.map(() => "?").join(", ");
  await ctx.transaction(async (em) => {
    const table = qualified(em, "quota_reservations");
    for (const quota of quotas) {
      await run(em, `update ${table} set expired = true where name = ? and touched_at < ? and not expired`, [
        quota.name,
        new Date(now - quota.expireAfterMs),
      ]);
    }
    await run(
      em,
      `update ${table} set expired = true
       where not expired and holder in (select holder from ${table} where expired and name in (${names}))`,
      [...byName.keys()],
    );
  });
  for (;;) {
    const batch = await ctx.transaction((em) =>
      run(
        em,
        `select id, name, key, window_start, holder from ${qualified(em, "quota_reservations")}
         where expired and name in (${names}) order by holder limit ?`,
        [...byName.keys(), BATCH],
      ),
    );
    for (const holder of new Set(batch.map((row) => row.holder))) if (holder !== null) await cleanUp?.(holder);
    for (const row of batch) {
      const counter = { name: row.name, key: row.key, windowStart: new Date(row.window_start) };
      await ctx.transaction(async (em) => {
        await lockCounter(em, byName.get(row.name)!, counter);
        const [gone] = await run(
          em,
          `delete from ${qualified(em, "quota_reservations")} where id = ? and expired returning units`,
          [row.id],
        );
        if (gone) await count(em, counter, -Number(gone.units));
      });
    }
    if (batch.length < BATCH) return;
  }
}

/** The kit's 429 `quota.exceeded`: the quota named, its limit, and for a windowed one when it frees. */
export function quotaExceeded(quota: Quota, retryAfterSeconds: number | undefined): ConnectError {
  const when = retryAfterSeconds === undefined ? "" : `; try again in ${retryAfterSeconds} seconds`;
  return problem(429, "quota.exceeded", `The quota ${quota.name} of ${quota.limit} would be passed${when}.`, {
    quota: quota.name,
    limit: quota.limit,
    ...(retryAfterSeconds === undefined ? {} : { retry_after_seconds: retryAfterSeconds }),
  });
}

/**
 * What a reservation takes of a quota `used` up to its limit when it needs `units`: `ahead` while the quota leaves
 * that, else exactly `units` (never all that is left, which would refuse a concurrent reservation that fits);
 * undefined when not even `units` fit.
 */
function grantOf(quota: Quota, used: number, units: number, ahead = units): number | undefined {
  const left = quota.limit - used;
  if (ahead > units && ahead <= left) return ahead;
  return units <= left ? units : undefined;
}

function refusal(quota: Quota, key: string, at: Date): ConnectError {
  const { end } = windowOf(quota, at);
  const retryAfterSeconds = end && Math.max(1, Math.ceil((end.getTime() - at.getTime()) / 1000));
  return (quota.refused ?? ((_, seconds) => quotaExceeded(quota, seconds)))(key, retryAfterSeconds);
}

function expiredOf(quota: Quota): ConnectError {
  return (
    quota.expired?.() ??
    problem(408, "request.timeout", `The reservation of ${quota.name} expired unused; nothing was counted.`)
  );
}

/** The counter's row, made at 0 when missing, locked to the end of the transaction; answers what it holds. */
async function lockCounter(em: EntityManager, quota: Quota, counter: Counter): Promise<number> {
  const table = qualified(em, "quota_usage");
  // A window's row says when it ends (housekeeping prunes it a day later); a standing total's never does.
  const endsAt = quota.windowMs ? new Date(counter.windowStart.getTime() + quota.windowMs) : null;
  await run(
    em,
    `insert into ${table} (name, key, window_start, ends_at, used) values (?, ?, ?, ?, 0) on conflict do nothing`,
    [counter.name, counter.key, counter.windowStart, endsAt],
  );
  const [row] = await run(em, `select used from ${table} where name = ? and key = ? and window_start = ? for update`, [
    counter.name,
    counter.key,
    counter.windowStart,
  ]);
  return Number(row.used);
}

/** Adds to (or, negative, takes from) a counter the caller locked. */
async function count(em: EntityManager, counter: Counter, units: number): Promise<void> {
  await run(
    em,
    `update ${qualified(em, "quota_usage")} set used = used + ? where name = ? and key = ? and window_start = ?`,
    [units, counter.name, counter.key, counter.windowStart],
  );
}

/** The fixed window `at` falls in; a standing total's is the epoch, never ending. */
function windowOf(quota: Quota, at: Date): { start: Date; end?: Date } {
  if (!quota.windowMs) return { start: new Date(0) };
  const start = Math.floor(at.getTime() / quota.windowMs) * quota.windowMs;
  return { start: new Date(start), end: new Date(start + quota.windowMs) };
}

function checkUnits(units: number): void {
  if (!(Number.isSafeInteger(units) && units >= 0)) throw new Error(`quota units must be whole and not negative`);
}

/** One statement outside any transaction when the context can (its ORM), else in a short transaction. */
function alone<T>(ctx: QuotaContext, work: (em: EntityManager) => Promise<T>): Promise<T> {
  return ctx.orm ? work(ctx.orm.em.fork()) : ctx.transaction(work);
}

/** `work` in the caller's transaction, or a short one of its own. */
function within<T>(ctx: QuotaContext, em: EntityManager | undefined, work: (em: EntityManager) => Promise<T>) {
  return em ? work(em) : ctx.transaction(work);
}

const run = (em: EntityManager, text: string, params: unknown[]) => sql<Record<string, string>>(em, text, params);
