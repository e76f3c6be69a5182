import type { PGlite } from "@electric-sql/pglite";

/**
 * The order in which the embedded database's one session serves its socket
 * connections' protocol messages. PGlite is a single PostgreSQL session, and
 * pglite-socket queues each connection's messages one by one; its own queue
 * keeps a connection's turn only while a transaction is open, so an
 * extended-protocol query outside one (Parse, Bind, Describe, Execute, Sync:
 * five messages) could be split by another connection's: "bind message
 * supplies 3 parameters, but prepared statement requires 1", or another
 * query's statement bound to these values. Here a connection keeps its turn
 * until its query is whole (its Sync, or a simple Query) and, as before, while
 * its transaction is open.
 */

interface QueuedMessage {
  handlerId: number;
  message: Uint8Array;
  resolve: (bytes: number) => void;
  reject: (error: unknown) => void;
  onData: (data: Uint8Array) => void;
}

/** Messages that leave an extended-protocol query unfinished until the connection's Sync. */
const OPENS_QUERY = new Set(["P", "B", "D", "E", "C", "H"].map((type) => type.charCodeAt(0)));
const SYNC = "S".charCodeAt(0);

/** The queue pglite-socket's server hands its connections (its `queryQueue`, same methods). */
export class SessionQueue {
  private readonly queue: QueuedMessage[] = [];
  private processing = false;
  /** The connection whose turn it is, while its query is unfinished or its transaction open. */
  private holder: number | null = null;
  private queryOpen = false;

  constructor(private readonly db: PGlite) {}

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ handlerId, message, resolve, reject, onData });
      void this.process();
    });
  }

  getQueueLength(): number {
    return this.queue.length;
  }

  /** A connection went away: its queued messages fail, and an unfinished query of its no longer holds the turn. */
  clearQueueForHandler(handlerId: number): void {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      if (this.queue[i].handlerId !== handlerId) continue;
      this.queue[i].reject(new Error("Handler disconnected"));
      this.queue.splice(i, 1);
    }
    if (this.holder === handlerId && !this.db.isInTransaction()) this.release();
  }

  /** A connection went away inside its transaction: roll it back, so the session serves the others again. */
  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (this.holder !== handlerId) return;
    if (this.db.isInTransaction()) await this.db.exec("ROLLBACK");
    this.release();
    await this.process();
  }

  private release(): void {
    this.holder = null;
    this.queryOpen = false;
  }

  private next(): QueuedMessage | undefined {
    const held = this.holder !== null && (this.queryOpen || this.db.isInTransaction());
    if (!held) return this.queue.shift();
    const index = this.queue.findIndex((queued) => queued.handlerId === this.holder);
    return index === -1 ? undefined : this.queue.splice(index, 1)[0];
  }

  private async process(): Promise<void> {
    if (this.processing) return;
    this.processing = true;
    try {
      for (let queued = this.next(); queued; queued = this.next()) {
        let bytes = 0;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(queued.message, {
              onRawData: (data) => {
                bytes += data.length;
                queued.onData(data);
              },
            }),
          );
        } catch (error) {
          queued.reject(error);
          continue;
        }
        const type = queued.message[0];
        this.holder = queued.handlerId;
        this.queryOpen = OPENS_QUERY.has(type) || (this.queryOpen && type !== SYNC && type !== "Q".charCodeAt(0));
        queued.resolve(bytes);
      }
    } finally {
      this.processing = false;
    }
  }
}
