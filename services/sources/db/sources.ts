import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type RequiredEntityData } from "@mikro-orm/postgresql";
import {
  CredentialScheme,
  type Source,
  SourceKind,
  SourceSchema,
  type SourceStatus,
  SourceStatusSchema,
  Staleness,
} from "../../../gen/pf/sources/v1/registry_pb.js";
import { FailureClass } from "../../../gen/pf/sources/v1/runs_pb.js";
import { sql } from "../../kit/db/sql.js";
import { problem } from "../../kit/handler/problem.js";
import { type Kind, stalenessOf } from "../domain/sources.js";
import { SourceRow } from "./entities.js";
import { enumOf } from "./enums.js";

export const sourceNotFound = () => problem(404, "source.not_found", "There is no such source.");

/** The source, locked for the rest of the transaction when asked; 404 when missing. */
export async function sourceByKey(em: EntityManager, key: string, lock = false): Promise<SourceRow> {
  const row = await em.findOne(SourceRow, { key }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
  if (!row) throw sourceNotFound();
  return row;
}

/** The source of this key, or null when there is none. */
export const findSource = (em: EntityManager, key: string) => em.findOne(SourceRow, { key });

/** Writes a new source. */
export async function insertSource(em: EntityManager, source: RequiredEntityData<SourceRow>): Promise<SourceRow> {
  const row = em.create(SourceRow, source);
  await em.flush();
  return row;
}

/** Writes changes to a source (those made on the row, and `changes`) in the caller's transaction. */
export async function changeSource(em: EntityManager, row: SourceRow, changes: Partial<SourceRow> = {}): Promise<void> {
  Object.assign(row, changes);
  await em.flush();
}

/** Sources by key after the cursor's, filtered by kind and enabled (the source list, health). */
export function sourcesPage(
  em: EntityManager,
  filter: { kind?: string; enabled?: boolean; after?: string },
  limit: number,
): Promise<SourceRow[]> {
  return em.find(
    SourceRow,
    {
      ...(filter.kind ? { kind: filter.kind } : {}),
      ...(filter.enabled === undefined ? {} : { enabled: filter.enabled }),
      ...(filter.after ? { key: { $gt: filter.after } } : {}),
    },
    { orderBy: { key: "asc" }, limit: limit + 1 },
  );
}

/** The sources of these keys, by key. */
export const sourcesByKeys = (em: EntityManager, keys: string[]) =>
  keys.length === 0 ? Promise.resolve([]) : em.find(SourceRow, { key: { $in: keys } }, { orderBy: { key: "asc" } });

/** Whether any item (removed ones included) belongs to the source. */
export async function hasItems(em: EntityManager, key: string): Promise<boolean> {
  const rows = await sql<{ one: number }>(em, `select 1 as one from {items} where source_key = ? limit 1`, [key]);
  return rows.length > 0;
}

/** Deletes a source without items, and its finished runs; the row is forgotten, so nothing writes it again. */
export async function deleteSource(em: EntityManager, row: SourceRow): Promise<void> {
  await sql(em, `delete from {fetch_runs} where source_key = ?`, [row.key]);
  await sql(em, `delete from {sources} where key = ?`, [row.key]);
  em.getUnitOfWork().unsetIdentity(row);
}

/**
 * Enabled fetched sources that turned stale by `at` (last success older than `intervals` fetch intervals) and were
 * not reported since their last success: marked reported and answered, locked, so each crossing is told once.
 */
export async function newlyStale(em: EntityManager, at: Date, intervals: number, limit: number): Promise<SourceRow[]> {
  const keys = await sql<{ key: string }>(
    em,
    `update {sources} set stale_reported = true where key in (
       select key from {sources}
       where enabled and kind <> 'manual' and not stale_reported and last_success_at is not null
         and last_success_at + ? * fetch_interval_seconds * interval '1 second' < ?
       limit ? for update skip locked)
     returning key`,
    [intervals, at, limit],
  );
  return sourcesByKeys(
    em,
    keys.map(({ key }) => key),
  );
}

/** A source's health and staleness as of `now`. */
export function sourceStatusOf(row: SourceRow, now: Date): SourceStatus {
  const { staleness, staleAfter } = stalenessOf(
    {
      kind: row.kind as Kind,
      lastSuccessAt: row.lastSuccessAt ?? null,
      fetchIntervalSeconds: row.fetchIntervalSeconds,
    },
    now,
  );
  return create(SourceStatusSchema, {
    sourceKey: row.key,
    kind: enumOf(SourceKind, row.kind),
    enabled: row.enabled,
    health: {
      staleness: enumOf(Staleness, staleness),
      lastSuccessAt: row.lastSuccessAt ? timestampFromDate(row.lastSuccessAt) : undefined,
      lastAttemptAt: row.lastAttemptAt ? timestampFromDate(row.lastAttemptAt) : undefined,
      consecutiveFailures: row.consecutiveFailures,
      lastFailureClass: enumOf(FailureClass, row.lastFailureClass),
      staleAfter: staleAfter ? timestampFromDate(staleAfter) : undefined,
    },
  });
}

/** A source as read at `now`: the credential by variable name only, never a value (the service never holds one). */
export function sourceToProto(row: SourceRow, now: Date): Source {
  return create(SourceSchema, {
    key: row.key,
    kind: enumOf(SourceKind, row.kind),
    url: row.url ?? "",
    enabled: row.enabled,
    termsNote: row.termsNote,
    robotsNote: row.robotsNote,
    credential: row.credentialVariable
      ? {
          variable: row.credentialVariable,
          scheme: enumOf(CredentialScheme, row.credentialScheme),
          header: row.credentialHeader ?? "",
        }
      : undefined,
    fetchIntervalSeconds: row.fetchIntervalSeconds,
    title: row.title,
    health: sourceStatusOf(row, now).health,
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
  });
}
