import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { IndexDocumentSchema } from "../../../gen/pf/search/v1/documents_pb.js";
import type { Logger } from "../runtime/logger.js";
import type { DocumentWrite, SearchIndex, WriteOutcome } from "./document.js";
import type { Statement } from "./statements.js";

/** How the relay behaves (`settings.ts`). */
export interface RelaySettings {
  /** Writes per call to search (at most 500, search's own limit). */
  batch: number;
  /** The longest pause after a failed call. */
  maxBackoffMs: number;
}

interface PendingRow {
  type: string;
  id: string;
  revision: string;
  deleted: boolean;
  /** The document's JSON as `recordSearchDocuments` stored it. */
  document: JsonValue | null;
}

/** Codes with which search refuses a batch whole for what it holds: the writes go one by one to find the one. */
const REFUSED_WHOLE = new Set([Code.InvalidArgument, Code.FailedPrecondition, Code.OutOfRange]);

/**
 * Pushes an owner's pending documents to search, batch after batch until none is left. Run by one instance at a
 * time (the relay's lease), so no two instances push a batch at once. A call that fails marks its documents' tries
 * and stops the pass; the next pass waits out a pause that doubles with each failed pass (1 s … `maxBackoffMs`),
 * so search being down loses nothing and costs one call per pause. Documents stay pending until search answers.
 */
export class SearchRelay {
  private failures = 0;
  private pausedUntil = 0;

  constructor(
    private readonly index: SearchIndex,
    private readonly db: { run: Statement; table: string },
    private readonly settings: RelaySettings,
    private readonly logger: Logger,
  ) {}

  /** One pass; answers how many writes search took or refused (0 while paused). */
  async pass(): Promise<number> {
    if (Date.now() < this.pausedUntil) return 0;
    let done = 0;
    for (;;) {
      const rows = await this.pending();
      if (rows.length === 0) break;
      const outcomes = await this.send(rows);
      if (!outcomes) return done;
      const again = await this.settle(rows, outcomes);
      done += rows.length - again;
      this.failures = 0;
      if (rows.length < this.settings.batch && again === 0) break;
    }
    return done;
  }

  private pending(): Promise<PendingRow[]> {
    return this.db.run<PendingRow>(
      `select type, id, revision, deleted, document from ${this.db.table}
       where pushed_revision < revision order by changed_at, type, id limit $1`,
      [this.settings.batch],
    );
  }

  /** The batch's outcomes; undefined when search could not take it (the pause is set). */
  private async send(rows: PendingRow[]): Promise<WriteOutcome[] | undefined> {
    const writes = rows.map(writeOf);
    try {
      return await this.index.write(writes);
    } catch (error) {
      if (rows.length > 1 && error instanceof ConnectError && REFUSED_WHOLE.has(error.code)) {
        // One write spoils the batch: each alone, so the others go and the culprit is refused on its own.
        return Promise.all(writes.map((write) => this.sendAlone(write)));
      }
      if (rows.length === 1 && error instanceof ConnectError && REFUSED_WHOLE.has(error.code)) {
        return [{ outcome: "rejected", reason: error.rawMessage.slice(0, 500) }];
      }
      await this.failed(rows, error);
      return undefined;
    }
  }

  private async sendAlone(write: DocumentWrite): Promise<WriteOutcome> {
    try {
      const [outcome] = await this.index.write([write]);
      return outcome;
    } catch (error) {
      if (error instanceof ConnectError && REFUSED_WHOLE.has(error.code))
        return { outcome: "rejected", reason: error.rawMessage.slice(0, 500) };
      throw error;
    }
  }

  private async failed(rows: PendingRow[], error: unknown): Promise<void> {
    this.failures++;
    const pauseMs = Math.min(1_000 * 2 ** (this.failures - 1), this.settings.maxBackoffMs);
    this.pausedUntil = Date.now() + pauseMs;
    const message = error instanceof Error ? error.message : String(error);
    await this.db.run(
      `update ${this.db.table} as d set attempts = d.attempts + 1, last_error = $3
       from unnest($1::text[], $2::text[]) as b(type, id) where d.type = b.type and d.id = b.id`,
      [rows.map((row) => row.type), rows.map((row) => row.id), message.slice(0, 500)],
    );
    // Logged on the first failure and every tenth after it: search down for an hour is not 120 warnings.
    if (this.failures % 10 === 1)
      this.logger.warn(
        { err: error, documents: rows.length, pauseMs, failures: this.failures },
        "search did not take the documents; they stay pending and go again after a pause",
      );
  }

  /**
   * Marks what search answered. Applied, or stale at the revision sent (search holds it already): pushed. Stale
   * with search at a newer revision than the owner's (an owner restored from a backup): the owner's revision moves
   * above search's and the document goes again. Rejected: set aside until the document changes. Answers how many
   * go again.
   */
  private async settle(rows: PendingRow[], outcomes: WriteOutcome[]): Promise<number> {
    const results = rows.map((row, i) => {
      const outcome = outcomes[i] ?? { outcome: "rejected", reason: "search answered no outcome" };
      return {
        type: row.type,
        id: row.id,
        revision: row.revision,
        above:
          outcome.outcome === "stale" && outcome.currentRevision > Number(row.revision)
            ? outcome.currentRevision
            : null,
        rejected: outcome.outcome === "rejected" ? outcome.reason || "rejected" : null,
      };
    });
    await this.db.run(
      `update ${this.db.table} as d
       set pushed_revision = case when r.above is null then greatest(d.pushed_revision, r.revision) else d.pushed_revision end,
           revision = case when r.above is not null and d.revision <= r.above then r.above + 1 else d.revision end,
           rejected = r.rejected is not null and d.revision = r.revision,
           last_error = r.rejected, attempts = 0
       from jsonb_to_recordset($1::jsonb) as r(type text, id text, revision bigint, above bigint, rejected text)
       where d.type = r.type and d.id = r.id`,
      [JSON.stringify(results)],
    );
    for (const result of results.filter((r) => r.rejected !== null))
      this.logger.warn(result, "search refused a document; it is set aside until it changes");
    return results.filter((result) => result.above !== null).length;
  }
}

function writeOf(row: PendingRow): DocumentWrite {
  return {
    type: row.type,
    id: row.id,
    revision: Number(row.revision),
    deleted: row.deleted,
    ...(row.document && { document: fromJson(IndexDocumentSchema, row.document) }),
  };
}
