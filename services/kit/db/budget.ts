import type { ProcessPool } from "./pool.js";
import { START_WAIT_MS, waitingOutTooMany } from "./too-many-clients.js";

/** The connections one process holds on the database at most: its pool and the connections kept apart from it. */
export interface ConnectionBudget {
  /** PF_DB_POOL. */
  pool: number;
  /** Connections of their own, by what holds them. */
  dedicated: Record<string, number>;
  total: number;
}

/**
 * A process's budget. Apart from the pool: the /readyz probe's connection and, while services migrate, the one
 * connection holding their migration locks, and on a database `server` the outbox wake's LISTEN connection and the relays'
 * connections (kit/events; the embedded database has neither: one session, relays on the pool).
 */
export function connectionBudget(poolSize: number, server?: { relays: number }): ConnectionBudget {
  const dedicated: Record<string, number> = { readiness: 1, "migration lock": 1 };
  if (server) Object.assign(dedicated, { "outbox wake": 1, "outbox relays": server.relays });
  const total = poolSize + Object.values(dedicated).reduce((sum, n) => sum + n, 0);
  return { pool: poolSize, dedicated, total };
}

/** The budget as the start prints it. */
export function budgetLine(budget: ConnectionBudget): string {
  const dedicated = Object.entries(budget.dedicated).map(([holder, n]) => `${holder} ${n}`);
  const apart = budget.total - budget.pool;
  return `database connections per process: pool ${budget.pool} (PF_DB_POOL) + ${apart} of their own (${dedicated.join(", ")}) = ${budget.total}`;
}

/**
 * Fails the start, naming PF_DB_POOL, when the budget exceeds what the server lets clients hold
 * (max_connections less superuser_reserved_connections): such a process would meet "too many clients" under load
 * however few instances run. Asked on the pool's first connection, waiting out a server with none to spare.
 */
export async function checkBudget(pool: ProcessPool, budget: ConnectionBudget): Promise<void> {
  const [server] = await waitingOutTooMany(
    async () =>
      (
        await pool.query<{ max: number; reserved: number }>(
          `select current_setting('max_connections')::int as max,
                  current_setting('superuser_reserved_connections')::int as reserved`,
        )
      ).rows,
    { boundMs: START_WAIT_MS, what: "the start", logger: pool.settings.logger, atStart: true },
  );
  const allowed = server.max - server.reserved;
  if (budget.total > allowed)
    throw new Error(
      `PF_DB_POOL=${budget.pool} needs ${budget.total} database connections per process (${budget.pool} + ${budget.total - budget.pool} of their own), ` +
        `more than the server allows (max_connections ${server.max} less superuser_reserved_connections ${server.reserved} = ${allowed}): ` +
        `lower PF_DB_POOL (docs/operations.md, "Connections")`,
    );
}
