import pg from "pg";

/** How long /readyz waits for the database: one that has not answered by then is not ready. */
const READINESS_DEADLINE_MS = 2_000;
/** How the probe's connection shows in pg_stat_activity. */
export const APPLICATION_NAME = "pf-readiness";

/**
 * Whether the database answers, asked on one connection of the process's own, never through a service's pool: a
 * pool busy with user work (every connection held, callers queued for one) says nothing about the database, and an
 * orchestrator reading /readyz would pull a loaded instance out of rotation (a wedged pool is /healthz's). The
 * connection is opened by the first probe and kept; one lost since the last probe (a restarted server) is opened
 * again at once, and one that has not answered within the deadline is dropped, so the next probe starts clean. The
 * embedded database is one session: there the probe still waits for a transaction in progress.
 */
export class DatabaseProbe {
  private client?: Promise<pg.Client>;

  constructor(
    private readonly url: string,
    private readonly deadlineMs = READINESS_DEADLINE_MS,
  ) {}

  /** True once the database answered `select 1`; false when it did not within the deadline. */
  async answers(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), this.deadlineMs)));
    const kept = this.client;
    const asked = this.selectOne().then((answered) => answered || (kept !== undefined && this.selectOne()));
    const answered = await Promise.race([asked, late]).finally(() => clearTimeout(timer));
    if (!answered && this.client) void this.drop(this.client);
    return answered;
  }

  async stop(): Promise<void> {
    if (this.client) await this.drop(this.client);
  }

  /** `select 1` on the kept connection (opened when there is none); a failure drops it. */
  private async selectOne(): Promise<boolean> {
    const client = (this.client ??= this.connect());
    try {
      await (await client).query("select 1");
      return true;
    } catch {
      void this.drop(client);
      return false;
    }
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.url,
      application_name: APPLICATION_NAME,
      connectionTimeoutMillis: this.deadlineMs,
    });
    // A connection lost while idle is reported here (unheard, it would end the process); the next probe opens another.
    client.on("error", () => undefined);
    await client.connect();
    return client;
  }

  /** Forgets the connection and closes it (a query still running is cut with its socket). */
  private async drop(client: Promise<pg.Client>): Promise<void> {
    if (this.client === client) this.client = undefined;
    await client.then((c) => c.end()).catch(() => undefined);
  }
}
