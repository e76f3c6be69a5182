import type { ContextRevision } from "../../../gen/pf/trade/v1/context_pb.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import type { ContextRevisionRow } from "./context-entities.js";
import type { InputSource } from "./context-input.js";
import { revisionToProto } from "./context.js";

/** The revision's columns as `pg` answers them (timestamps as text), under the entity's names. */
type RevisionText = Omit<ContextRevisionRow, "createdAt" | "decidedAt" | "publishedAt"> & {
  createdAt: string;
  decidedAt: string | null;
  publishedAt: string | null;
};

const published = new HotRead<{ symbol: string } & Partial<RevisionText>, [string]>(
  "trade.context_published",
  `select i.symbol, r.id, r.instrument_id as "instrumentId", r.revision, r.text, r.citations, r.input_id as "inputId",
     r.status, r.author_kind as "authorKind", r.author, r.workflow, r.run_id as "runId", r.stub_provider as "stubProvider",
     r.requested_by as "requestedBy", r.decided_by as "decidedBy", r.decided_at as "decidedAt",
     r.decision_note as "decisionNote", r.published_by as "publishedBy", r.published_at as "publishedAt",
     r.created_at as "createdAt"
   from {instruments} i left join {context_revisions} r on r.instrument_id = i.id and r.status = 'published'
   where i.symbol = $1`,
);

const sources = new HotRead<Omit<InputSource, "at"> & { at: string | null }, [string, number[]]>(
  "trade.context_cited",
  `select number, kind, ref, revision, title, url, source_key as "sourceKey", at, filing_type as "filingType",
     metric, value, unit, currency
   from {context_input_sources} where input_id = $1 and number = any($2::int[]) order by number`,
);

/**
 * The published context of an instrument (the hot read of GET …/context
 * without all=1: two prepared statements, no ORM): undefined for an unknown
 * symbol, `published` unset when none is published.
 */
export async function readPublishedContext(
  ctx: ReadContext,
  symbol: string,
): Promise<{ symbol: string; published?: ContextRevision } | undefined> {
  const [found] = await published.run(ctx, symbol);
  if (!found) return undefined;
  if (found.id === null || found.id === undefined) return { symbol: found.symbol };
  const row = found as { symbol: string } & RevisionText;
  const revision: ContextRevisionRow = {
    ...row,
    createdAt: new Date(row.createdAt),
    decidedAt: row.decidedAt === null ? null : new Date(row.decidedAt),
    publishedAt: row.publishedAt === null ? null : new Date(row.publishedAt),
  };
  const cited = await sources.run(ctx, row.inputId, row.citations);
  const byNumber = new Map(
    cited.map((source) => [
      `${row.inputId}:${source.number}`,
      { ...source, at: source.at === null ? null : new Date(source.at) },
    ]),
  );
  return { symbol: found.symbol, published: revisionToProto(revision, byNumber) };
}
