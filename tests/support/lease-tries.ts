import { vi, type MockInstance } from "vitest";
import type { ServiceContext } from "../../services/kit/service/module.js";
import { until } from "./until.js";

const spies = new WeakMap<object, MockInstance>();

/**
 * How many times an instance has tried to take a leased job's lease so far (each pass of the job begins with a
 * try): the observable sign that another instance looked while one holds the job.
 */
export function leaseTries(ctx: ServiceContext, name: string): number {
  const connection = ctx.orm.em.getConnection();
  if (!spies.has(connection)) spies.set(connection, vi.spyOn(connection, "execute"));
  return spies
    .get(connection)!
    .mock.calls.filter(
      ([sql, params]) => /^insert into \S*leases/.test(String(sql)) && Array.isArray(params) && params[0] === name,
    ).length;
}

/**
 * Resolves once `passes` whole passes of the leased job `name` have begun and ended after this moment on this
 * instance (a pass begins with its try, and the next try waits for it to end): what the job does with the state
 * of now is done.
 */
export async function untilPassesAfter(ctx: ServiceContext, name: string, passes = 1): Promise<void> {
  const before = leaseTries(ctx, name);
  await until(() => leaseTries(ctx, name) > before + passes);
}
