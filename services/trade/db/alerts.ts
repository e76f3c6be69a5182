import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { AlertKind, type AlertRule, AlertRuleSchema, Direction } from "../../../gen/pf/trade/v1/alerts_pb.js";
import { sql } from "../../kit/db/sql.js";
import { valueOf } from "../domain/vocabulary.js";
import { AlertDeliveryRow, AlertRuleRow, InstrumentRow } from "./entities.js";

/** A rule to store; `levelText` is cast to numeric by PostgreSQL, never through a JS number. */
export interface RuleDraft {
  id: string;
  owner: string;
  instrumentId: string;
  kind: string;
  metric: string;
  unit: string;
  currency: string;
  levelText: string;
  direction: string;
  filingType: string;
  createdAt: Date;
}

/** How many alert rules a person keeps. */
export const ruleCount = (em: EntityManager, owner: string) => em.count(AlertRuleRow, { owner });

/** Stores a rule, and answers it as stored (the level as the database parsed it). */
export async function insertRule(em: EntityManager, draft: RuleDraft): Promise<AlertRuleRow> {
  await sql(
    em,
    `insert into {alert_rules} (id, owner, instrument_id, kind, metric, unit, currency, level_text,
       level, direction, filing_type, created_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, nullif(?, '')::numeric, ?, ?, ?)`,
    [
      draft.id,
      draft.owner,
      draft.instrumentId,
      draft.kind,
      draft.metric,
      draft.unit,
      draft.currency,
      draft.levelText,
      draft.levelText,
      draft.direction,
      draft.filingType,
      draft.createdAt,
    ],
  );
  return em.findOneOrFail(AlertRuleRow, { id: draft.id });
}

/** Deletes a rule; its deliveries stay. */
export async function deleteRule(em: EntityManager, id: string): Promise<void> {
  await em.nativeDelete(AlertRuleRow, { id });
}

/** A person's rule, or null when it is missing or another person's (both answer 404). */
export async function ownRule(em: EntityManager, id: string, owner: string): Promise<AlertRuleRow | null> {
  const row = await em.findOne(AlertRuleRow, { id });
  return row && row.owner === owner ? row : null;
}

/** Up to `rows` of a person's rules, newest first, before the cursor's id. */
export function rulesOf(em: EntityManager, owner: string, before: string | undefined, rows: number) {
  return em.find(AlertRuleRow, before === undefined ? { owner } : { owner, id: { $lt: before } }, {
    orderBy: { id: "desc" },
    limit: rows,
  });
}

/** Up to `rows` of a person's deliveries, newest first, before the cursor's id. */
export function deliveriesOf(em: EntityManager, owner: string, before: string | undefined, rows: number) {
  return em.find(AlertDeliveryRow, before === undefined ? { owner } : { owner, id: { $lt: before } }, {
    orderBy: { id: "desc" },
    limit: rows,
  });
}

/** Rules as answered, with their instruments' symbols. */
export async function ruleAnswers(em: EntityManager, rows: AlertRuleRow[]): Promise<AlertRule[]> {
  if (rows.length === 0) return [];
  const instruments = await em.find(InstrumentRow, { id: { $in: [...new Set(rows.map((row) => row.instrumentId))] } });
  const symbol = new Map(instruments.map((row) => [row.id, row.symbol]));
  return rows.map((row) =>
    create(AlertRuleSchema, {
      id: row.id,
      owner: row.owner,
      instrumentId: row.instrumentId,
      symbol: symbol.get(row.instrumentId) ?? "",
      kind: valueOf(AlertKind, row.kind),
      metric: row.metric,
      unit: row.unit,
      currency: row.currency,
      level: row.levelText,
      direction: valueOf(Direction, row.direction),
      filingType: row.filingType,
      createdAt: timestampFromDate(row.createdAt),
    }),
  );
}
