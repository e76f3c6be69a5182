import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";
import { authorProperties } from "../../kit/db/author-columns.js";

/** A stored input of the workflow trade.summarize_market_context: one per instrument and set of sources. */
export const ContextInputRow = defineEntity({
  name: "ContextInputRow",
  tableName: "context_inputs",
  uniques: [{ name: "context_inputs_one_per_sources", properties: ["instrumentId", "fingerprint"] }],
  properties: {
    id: p.text().primary(),
    instrumentId: p.text(),
    /** A hash of its sources (kind, ref, revision), so an unchanged set is stored once. */
    fingerprint: p.text(),
    createdAt: p.datetime(),
  },
});
export type ContextInputRow = InferEntity<typeof ContextInputRow>;

/** Source number `number` of an input, copied as it was when the input was stored. Insert-only. */
export const ContextInputSourceRow = defineEntity({
  name: "ContextInputSourceRow",
  tableName: "context_input_sources",
  checks: [{ name: "context_input_sources_kind_check", expression: "kind in ('document', 'observation')" }],
  properties: {
    inputId: p.text().primary(),
    number: p.integer().primary(),
    kind: p.text(),
    ref: p.text(),
    revision: p.integer(),
    title: p.text(),
    url: p.text(),
    sourceKey: p.text(),
    at: p.datetime().nullable(),
    filingType: p.text(),
    metric: p.text(),
    value: p.text(),
    unit: p.text(),
    currency: p.text(),
  },
});
export type ContextInputSourceRow = InferEntity<typeof ContextInputSourceRow>;

/**
 * A revision of an instrument's context: numbered per instrument, its author
 * in the kit's columns (`authorColumns`), the editor's decision, and at most
 * one published per instrument.
 */
export const ContextRevisionRow = defineEntity({
  name: "ContextRevisionRow",
  tableName: "context_revisions",
  uniques: [
    { name: "context_revisions_number", properties: ["instrumentId", "revision"] },
    { name: "context_revisions_one_published", properties: ["instrumentId"], where: "status = 'published'" },
  ],
  checks: [
    {
      name: "context_revisions_status_check",
      expression: "status in ('draft', 'approved', 'rejected', 'published', 'superseded')",
    },
    { name: "context_revisions_author_kind_check", expression: "author_kind in ('person', 'ai', 'system')" },
  ],
  properties: {
    id: p.text().primary(),
    instrumentId: p.text(),
    revision: p.integer(),
    text: p.text(),
    citations: p.json<number[]>(),
    inputId: p.text(),
    status: p.text(),
    ...authorProperties(),
    decidedBy: p.text().nullable(),
    decidedAt: p.datetime().nullable(),
    decisionNote: p.text(),
    publishedBy: p.text().nullable(),
    publishedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  },
});
export type ContextRevisionRow = InferEntity<typeof ContextRevisionRow>;

export const contextEntities = [ContextInputRow, ContextInputSourceRow, ContextRevisionRow];
