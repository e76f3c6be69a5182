import pg from "pg";
import type { Logger } from "../runtime/logger.js";

/** The channel outbox relays are woken on; the payload is the service's schema. */
const CHANNEL = "pf_outbox";
/** How the connection shows in pg_stat_activity. */
export const APPLICATION_NAME = "pf-outbox-wake";
/** A lost connection is opened again after 100 ms, 200 ms … up to this; the relays poll meanwhile. */
const MAX_RECONNECT_MS = 5_000;

/**
 * Wakes outbox relays across processes with PostgreSQL LISTEN/NOTIFY, on one
 * connection per process shared by every service's relay. A process that
 * commits events while another instance holds the relay lease tells it here,
 * right after the commit. The NOTIFY is sent on this connection, outside the
 * writer's transaction and with an asynchronous commit: a NOTIFY inside it
 * would serialize every commit that writes events behind one lock held across
 * its WAL flush (pgbench: a quarter of the commits per second). While the
 * connection is down the relays' poll is the fallback; once back, every relay
 * gets a pass.
 */
export class OutboxWakes {
  private client?: pg.Client;
  private pid?: number;
  private readonly relays = new Map<string, () => void>();
  /** Schemas to announce; sent together, one statement at a time, so a burst of commits makes few NOTIFYs. */
  private readonly pending = new Set<string>();
  private sending = false;
  private reconnectMs = 100;
  private retry?: NodeJS.Timeout;
  private connecting?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly url: string,
    private readonly logger: Logger,
  ) {}

  /** Calls `wake` when a process asks for a pass of the relay of `schema`. */
  on(schema: string, wake: () => void): void {
    this.relays.set(schema, wake);
  }

  /** Whether other processes' notifications reach this one now. */
  listening(): boolean {
    return this.pid !== undefined;
  }

  /** Asks every process for a pass of `schema`'s relay (the lease's holder relays); dropped while not connected. */
  notify(schema: string): void {
    if (!this.listening()) return;
    this.pending.add(schema);
    void this.send();
  }

  /** Connects; a failure is logged and tried again meanwhile. */
  async start(): Promise<void> {
    this.connecting = this.connect();
    await this.connecting;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    await this.connecting;
    await this.client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.url,
      application_name: APPLICATION_NAME,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    this.client = client;
    client.on("notification", (message) => {
      if (message.processId === this.pid || !message.payload) return;
      this.relays.get(message.payload)?.();
    });
    // A terminated backend or a restarted server: 'error' (if any) then 'end'.
    client.on("error", (error) =>
      this.logger.warn({ err: error }, "outbox wake connection lost; relays poll meanwhile"),
    );
    client.on("end", () => this.lost(client));
    try {
      await client.connect();
      // Only wakes: nothing to keep if the server crashes right after.
      await client.query("set synchronous_commit = off");
      await client.query(`listen ${CHANNEL}`);
      const [{ pid }] = (await client.query<{ pid: number }>("select pg_backend_pid() as pid")).rows;
      if (this.stopped || this.client !== client) return;
      this.pid = pid;
      this.reconnectMs = 100;
      // Events committed while not listening are not announced again: every relay looks now.
      for (const wake of this.relays.values()) wake();
    } catch (error) {
      this.logger.warn({ err: error }, "outbox wake connection failed; relays poll meanwhile");
      await client.end().catch(() => undefined);
      this.lost(client);
    }
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.pid = undefined;
    this.pending.clear();
    if (this.stopped) return;
    clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      this.connecting = this.connect();
    }, this.reconnectMs);
    this.reconnectMs = Math.min(this.reconnectMs * 2, MAX_RECONNECT_MS);
  }

  private async send(): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    try {
      while (this.pending.size > 0 && this.client && this.listening()) {
        const schemas = [...this.pending];
        this.pending.clear();
        await this.client
          .query(`select pg_notify('${CHANNEL}', schema) from unnest($1::text[]) as schema`, [schemas])
          .catch((error: unknown) => this.logger.warn({ err: error }, "outbox wake not sent; the relay polls"));
      }
    } finally {
      this.sending = false;
    }
  }
}
