import { createHash } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { newId } from "../../kit/handler/ids.js";
import { ContextInputRow, ContextInputSourceRow } from "./context-entities.js";

/** How many of an instrument's newest documents and observations an input holds. */
export const INPUT_DOCUMENTS = 10;
export const INPUT_OBSERVATIONS = 20;

/** A numbered source of an input. */
export type InputSource = Omit<ContextInputSourceRow, "inputId">;

/** An input with its sources in number order. */
export interface StoredInput {
  input: ContextInputRow;
  sources: InputSource[];
}

type Unnumbered = Omit<InputSource, "number">;

/**
 * The instrument's input as of now: its newest documents (by publication,
 * else receipt), then its newest observations (by observed_at), numbered from
 * 1. An unchanged set of sources (the same documents at the same revisions and
 * the same observations) answers the input stored for it before, so a number
 * keeps naming one source; a changed set is stored as a new input.
 */
export async function storeInput(em: EntityManager, instrumentId: string, at: Date): Promise<StoredInput> {
  const sources = [...(await recentDocuments(em, instrumentId)), ...(await recentObservations(em, instrumentId))].map(
    (source, i) => ({ ...source, number: i + 1 }),
  );
  const fingerprint = createHash("sha256")
    .update(JSON.stringify(sources.map((s) => [s.kind, s.ref, s.revision])))
    .digest("hex");
  const made = await sql<{ id: string }>(
    em,
    `insert into {context_inputs} (id, instrument_id, fingerprint, created_at) values (?, ?, ?, ?)
       on conflict (instrument_id, fingerprint) do nothing returning id`,
    [newId("cin"), instrumentId, fingerprint, at],
  );
  if (made.length > 0 && sources.length > 0) {
    await em.insertMany(
      ContextInputSourceRow,
      sources.map((source) => ({ ...source, inputId: made[0].id })),
    );
  }
  const input = await em.findOneOrFail(ContextInputRow, { instrumentId, fingerprint });
  return { input, sources: made.length > 0 ? sources : await sourcesOf(em, input.id) };
}

/** A stored input and its sources, or null. */
export async function inputById(em: EntityManager, id: string): Promise<StoredInput | null> {
  const input = await em.findOne(ContextInputRow, { id });
  return input ? { input, sources: await sourcesOf(em, id) } : null;
}

/** The cited sources of several inputs: `inputId:number` → source. */
export async function citedSources(
  em: EntityManager,
  cited: { inputId: string; numbers: number[] }[],
): Promise<Map<string, InputSource>> {
  const inputIds = [...new Set(cited.filter((c) => c.numbers.length > 0).map((c) => c.inputId))];
  if (inputIds.length === 0) return new Map();
  const rows = await em.find(ContextInputSourceRow, { inputId: { $in: inputIds } });
  return new Map(rows.map((row) => [`${row.inputId}:${row.number}`, row]));
}

async function sourcesOf(em: EntityManager, inputId: string): Promise<InputSource[]> {
  return em.find(ContextInputSourceRow, { inputId }, { orderBy: { number: "asc" } });
}

async function recentDocuments(em: EntityManager, instrumentId: string): Promise<Unnumbered[]> {
  const rows = await sql<{
    id: string;
    revision: number;
    title: string;
    canonical_url: string;
    source_key: string;
    at: Date | string;
    filing_type: string;
  }>(
    em,
    `select id, revision, title, canonical_url, source_key, coalesce(published_at, received_at) as at, filing_type
     from {documents} where instrument_id = ? and removed_at is null
     order by coalesce(published_at, received_at) desc, id desc limit ${INPUT_DOCUMENTS}`,
    [instrumentId],
  );
  return rows.map((row) => ({
    kind: "document",
    ref: row.id,
    revision: row.revision,
    title: row.title,
    url: row.canonical_url,
    sourceKey: row.source_key,
    at: new Date(row.at),
    filingType: row.filing_type,
    metric: "",
    value: "",
    unit: "",
    currency: "",
  }));
}

async function recentObservations(em: EntityManager, instrumentId: string): Promise<Unnumbered[]> {
  const rows = await sql<{
    id: string;
    metric: string;
    value_text: string;
    unit: string;
    currency: string;
    observed_at: Date | string;
    source_key: string;
  }>(
    em,
    `select id, metric, value_text, unit, currency, observed_at, source_key
     from {observations} where instrument_id = ?
     order by observed_at desc, id desc limit ${INPUT_OBSERVATIONS}`,
    [instrumentId],
  );
  return rows.map((row) => ({
    kind: "observation",
    ref: row.id,
    revision: 0,
    title: [row.metric, row.value_text, row.unit === row.currency ? "" : row.unit, row.currency]
      .filter((part) => part !== "")
      .join(" "),
    url: "",
    sourceKey: row.source_key,
    at: new Date(row.observed_at),
    filingType: "",
    metric: row.metric,
    value: row.value_text,
    unit: row.unit,
    currency: row.currency,
  }));
}
