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

/** A batch on its way to search: its rows and what search made of them (undefined: the call failed, recorded). */
interface Flight {
  rows: PendingRow[];
  outcomes: Promise<WriteOutcome[] | undefined>;
}

/** What search made of one row, as the relay marks it. */
interface Mark {
  type: string;
  id: string;
  revision: string;
  /** Search's revision, when newer than the one sent: the owner's moves above it. */
  above: number | null;
  /** Why search refused it. */
  rejected: string | null;
}

/** Codes with which search refuses a batch whole for what it holds: it goes again in halves to find the one. */
const REFUSED_WHOLE = new Set([Code.InvalidArgument, Code.FailedPrecondition, Code.OutOfRange]);

/**
 * Pushes an owner's pending documents to search, batch after batch until none is left. Run by one instance at a
 * time (the relay's lease), so no two instances push a batch at once; an instance has one call to search on its
 * way at a time. While it is, one statement marks what search answered for the batch before and reads the next
 * batch, leaving out the documents on their way and those it marks: a document is never in two calls at once, so
 * search takes each one's revisions in order, and one changed while on its way goes again in a later batch. A call
 * that fails marks its documents' tries and stops the pass; the next pass waits out a pause that doubles with each
 * failed pass (1 s … `maxBackoffMs`), so search being down loses nothing and costs one call per pause. Documents
 * stay pending until search's answer is marked: a pass stopped before that sends them again, at the same revision.
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
    let marks: Mark[] = [];
    let flight: Flight | undefined;
    for (;;) {
      const marked = marks.length > 0;
      // Both end before the pass goes on or stops: nothing of it runs on after it.
      const [read, answered] = await Promise.allSettled([this.next(marks, flight?.rows ?? []), flight?.outcomes]);
      const rows = settledValue(read);
      const outcomes = settledValue(answered);
      marks = [];
      if (flight) {
        if (!outcomes) return done;
        marks = this.marksOf(flight.rows, outcomes);
        done += marks.filter((mark) => mark.above === null).length;
        this.failures = 0;
      }
      // Done once a read that marked nothing finds nothing (rows it marked may be pending again: read after it).
      if (rows.length === 0 && marks.length === 0 && !marked) return done;
      flight = rows.length > 0 ? { rows, outcomes: this.send(rows) } : undefined;
    }
  }

  /**
   * Marks what search answered (`marks`) and reads the next batch in one statement. Applied, or stale at the
   * revision sent (search holds it already): pushed. Stale with search at a newer revision than the owner's (an
   * owner restored from a backup): the owner's revision moves above search's and the document goes again.
   * Rejected: set aside until the document changes. The read sees the table as before the marks beside it, so the
   * marked documents are left out of it with those on their way (`flying`).
   */
  private next(marks: Mark[], flying: PendingRow[]): Promise<PendingRow[]> {
    const t = this.db.table;
    const left = [...marks, ...flying];
    return this.db.run<PendingRow>(
      `with marked as (
         update ${t} as d
         set pushed_revision = case when r.above is null then greatest(d.pushed_revision, r.revision) else d.pushed_revision end,
             revision = case when r.above is not null and d.revision <= r.above then r.above + 1 else d.revision end,
             rejected = r.rejected is not null and d.revision = r.revision,
             last_error = r.rejected, attempts = 0
         from unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::text[]) as r(type, id, revision, above, rejected)
         where d.type = r.type and d.id = r.id
       )
       select type, id, revision, deleted, document from ${t}
       where pushed_revision < revision and (type, id) not in (select * from unnest($6::text[], $7::text[]))
       order by changed_at, type, id limit $8`,
      [
        marks.map((m) => m.type),
        marks.map((m) => m.id),
        marks.map((m) => m.revision),
        marks.map((m) => m.above),
        marks.map((m) => m.rejected),
        left.map((row) => row.type),
        left.map((row) => row.id),
        this.settings.batch,
      ],
    );
  }

  /** The batch's outcomes; undefined when search could not take it (the pause is set). */
  private async send(rows: PendingRow[]): Promise<WriteOutcome[] | undefined> {
    try {
      return await this.write(rows.map(writeOf));
    } catch (error) {
      await this.failed(rows, error);
      return undefined;
    }
  }

  /**
   * Search's outcomes for these writes. A batch refused whole for one write it spoils goes again in halves, one after
   * the other, until that write goes alone and is refused on its own: the others go, in a few calls, not one each.
   */
  private async write(writes: DocumentWrite[]): Promise<WriteOutcome[]> {
    try {
      return await this.index.write(writes);
    } catch (error) {
      if (!(error instanceof ConnectError && REFUSED_WHOLE.has(error.code))) throw error;
      if (writes.length === 1) return [{ outcome: "rejected", reason: error.rawMessage.slice(0, 500) }];
      const half = Math.ceil(writes.length / 2);
      return [...(await this.write(writes.slice(0, half))), ...(await this.write(writes.slice(half)))];
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

  /** What search answered for each row, as `next` marks it; the refusals logged. */
  private marksOf(rows: PendingRow[], outcomes: WriteOutcome[]): Mark[] {
    const marks = rows.map((row, i): Mark => {
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
    for (const mark of marks.filter((m) => m.rejected !== null))
      this.logger.warn(mark, "search refused a document; it is set aside until it changes");
    return marks;
  }
}

/** A settled promise's value, or its reason thrown. */
function settledValue<T>(result: PromiseSettledResult<T>): T {
  if (result.status === "rejected") throw result.reason;
  return result.value;
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
