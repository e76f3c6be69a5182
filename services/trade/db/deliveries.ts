import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  AlertKind,
  type AlertDelivery,
  AlertDeliverySchema,
  Direction,
  DocumentRefSchema,
} from "../../../gen/pf/trade/v1/alerts_pb.js";
import { sql } from "../../kit/db/sql.js";
import { newId } from "../../kit/handler/ids.js";
import { valueOf } from "../domain/vocabulary.js";
import { AlertDeliveryRow, DocumentRow, InstrumentRow, type ObservationRow } from "./entities.js";

/** A delivery about to be made: its rule, owner and what triggered it. */
export interface DeliveryDraft {
  ruleId: string;
  owner: string;
  instrumentId: string;
  kind: string;
  triggerId: string;
  metric?: string;
  unit?: string;
  currency?: string;
  previousValue?: string;
  value?: string;
  level?: string;
  direction?: string;
}

type Crossing = { id: string; owner: string; level_text: string; previous: string; crossed: "up" | "down" };

/**
 * The threshold rules an observation crosses: the series' previous latest
 * value (same instrument, metric, unit and currency, by observed_at) on one
 * side of the level, the new one on the other (`up`: from below to at or
 * above; `down`: the reverse). Nothing for the first value of a series, and
 * nothing when the observation is not the latest by observed_at (a late
 * arrival changes no crossing). Compared as numeric in PostgreSQL.
 */
export async function crossedRules(em: EntityManager, observation: ObservationRow): Promise<DeliveryDraft[]> {
  const rows = await sql<Crossing>(
    em,
    `with cur as (select * from {observations} where id = ?),
     series as (
       select o.id, o.value, o.value_text, o.observed_at from {observations} o, cur
       where o.instrument_id = cur.instrument_id and o.metric = cur.metric and o.unit = cur.unit
         and o.currency = cur.currency and o.id <> cur.id
     ),
     prev as (select value, value_text from series order by observed_at desc, id desc limit 1)
     select r.id, r.owner, r.level_text, prev.value_text as previous,
       case when prev.value < r.level then 'up' else 'down' end as crossed
     from {alert_rules} r, cur, prev
     where not exists (select 1 from series where series.observed_at >= cur.observed_at)
       and r.instrument_id = cur.instrument_id and r.kind = 'threshold' and r.metric = cur.metric
       and r.unit = cur.unit and r.currency = cur.currency
       and ((r.direction in ('up', 'either') and prev.value < r.level and cur.value >= r.level)
         or (r.direction in ('down', 'either') and prev.value >= r.level and cur.value < r.level))
     order by r.id`,
    [observation.id],
  );
  return rows.map((row) => ({
    ruleId: row.id,
    owner: row.owner,
    instrumentId: observation.instrumentId,
    kind: "threshold",
    triggerId: observation.id,
    metric: observation.metric,
    unit: observation.unit,
    currency: observation.currency,
    previousValue: row.previous,
    value: observation.valueText,
    level: row.level_text,
    direction: row.crossed,
  }));
}

/** The document rules a document triggers: every new_document rule of its instrument, and filing_type rules of its form. */
export async function documentRules(em: EntityManager, document: DocumentRow): Promise<DeliveryDraft[]> {
  const rows = await sql<{ id: string; owner: string; kind: string }>(
    em,
    `select id, owner, kind from {alert_rules}
     where instrument_id = ? and (kind = 'new_document' or (kind = 'filing_type' and upper(filing_type) = upper(?)))
     order by id`,
    [document.instrumentId, document.filingType],
  );
  return rows.map((row) => ({
    ruleId: row.id,
    owner: row.owner,
    instrumentId: document.instrumentId,
    kind: row.kind,
    triggerId: document.id,
  }));
}

/**
 * Inserts the deliveries not yet made and answers those it made: the unique
 * (rule_id, trigger_id) lets each (rule, observation or document) deliver at
 * most once, whoever applies it twice.
 */
export async function insertDeliveries(
  em: EntityManager,
  drafts: DeliveryDraft[],
  at: Date,
): Promise<AlertDeliveryRow[]> {
  if (drafts.length === 0) return [];
  const values = drafts.map(() => "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").join(", ");
  const params = drafts.flatMap((draft) => [
    newId("dlv"),
    draft.ruleId,
    draft.owner,
    draft.instrumentId,
    draft.kind,
    draft.triggerId,
    draft.metric ?? "",
    draft.unit ?? "",
    draft.currency ?? "",
    draft.previousValue ?? "",
    draft.value ?? "",
    draft.level ?? "",
    draft.direction ?? "",
    at,
  ]);
  const made = await sql<{ id: string }>(
    em,
    `insert into {alert_deliveries} (id, rule_id, owner, instrument_id, kind, trigger_id, metric,
       unit, currency, previous_value, value, level, direction, delivered_at)
     values ${values} on conflict (rule_id, trigger_id) do nothing returning id`,
    params,
  );
  if (made.length === 0) return [];
  return em.find(AlertDeliveryRow, { id: { $in: made.map((row) => row.id) } }, { orderBy: { id: "asc" } });
}

/** Deliveries as answered: with their instrument's symbol and, for documents, the document. */
export async function deliveryAnswers(em: EntityManager, rows: AlertDeliveryRow[]): Promise<AlertDelivery[]> {
  if (rows.length === 0) return [];
  const instruments = await em.find(InstrumentRow, { id: { $in: [...new Set(rows.map((row) => row.instrumentId))] } });
  const documents = await em.find(DocumentRow, { id: { $in: rows.map((row) => row.triggerId) } });
  const symbol = new Map(instruments.map((row) => [row.id, row.symbol]));
  const document = new Map(documents.map((row) => [row.id, row]));
  return rows.map((row) => {
    const doc = document.get(row.triggerId);
    return create(AlertDeliverySchema, {
      id: row.id,
      ruleId: row.ruleId,
      subject: row.owner,
      instrumentId: row.instrumentId,
      symbol: symbol.get(row.instrumentId) ?? "",
      kind: valueOf(AlertKind, row.kind),
      observationId: row.kind === "threshold" ? row.triggerId : "",
      metric: row.metric,
      unit: row.unit,
      currency: row.currency,
      previousValue: row.previousValue,
      value: row.value,
      level: row.level,
      direction: valueOf(Direction, row.direction),
      document: doc
        ? create(DocumentRefSchema, {
            id: doc.id,
            itemId: doc.itemId,
            sourceKey: doc.sourceKey,
            canonicalUrl: doc.canonicalUrl,
            title: doc.title,
            filingType: doc.filingType,
            revision: doc.revision,
          })
        : undefined,
      deliveredAt: timestampFromDate(row.deliveredAt),
    });
  });
}
