import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { CacheStatsSchema, type CacheStats } from "../../../gen/pf/ai/v1/usage_pb.js";
import { sql } from "../../kit/db/sql.js";
import type { AiContext } from "../context.js";
import type { ProviderAnswer } from "../providers/provider.js";
import type { AiSettings } from "../settings.js";

/** The answer cached under `key` unless it expired, counting the hit on its entry: one statement, no transaction. */
export async function cachedAnswer(ctx: AiContext, key: string): Promise<ProviderAnswer | undefined> {
  const [row] = await sql<{ answer: ProviderAnswer }>(
    ctx.orm.em.fork(),
    `update {cache_entries} set hits = hits + 1 where key = ? and expires_at > ? returning answer`,
    [key, ctx.clock.now()],
  );
  return row?.answer;
}

/** What an answer is cached with: the call it answered, so a purge can pick it by namespace, operation or model. */
export interface CacheEntry {
  namespace: string;
  operation: string;
  provider: string;
  model: string;
  answer: ProviderAnswer;
}

/** Caches an answer under `key` for PF_AI_CACHE_TTL_SECONDS (replacing what an expired or racing call left there). */
export async function storeAnswer(ctx: AiContext, key: string, entry: CacheEntry): Promise<void> {
  const answer = JSON.stringify(entry.answer);
  const at = ctx.clock.now();
  const expiresAt = new Date(at.getTime() + ctx.settings.cacheTtlSeconds * 1000);
  await sql(
    ctx.orm.em.fork(),
    `insert into {cache_entries} (key, namespace, operation, provider, model, answer, bytes, hits, created_at, expires_at)
     values (?, ?, ?, ?, ?, ?::jsonb, ?, 0, ?, ?)
     on conflict (key) do update set answer = excluded.answer, bytes = excluded.bytes,
       created_at = excluded.created_at, expires_at = excluded.expires_at`,
    [
      key,
      entry.namespace,
      entry.operation,
      entry.provider,
      entry.model,
      answer,
      Buffer.byteLength(answer),
      at,
      expiresAt,
    ],
  );
}

/** Which entries a purge removes: those of this namespace, operation and model (`provider/model`); none: all. */
export interface CachePurge {
  namespace?: string;
  operation?: string;
  model?: { provider: string; model: string };
}

/**
 * Removes the entries the filter picks, answering how many. Purging everything also restarts the hit and miss
 * counts (cache_state.purged_at), in the caller's transaction.
 */
export async function purgeCache(em: EntityManager, filter: CachePurge, at: Date): Promise<number> {
  const conditions: string[] = [];
  const params: unknown[] = [];
  const add = (condition: string, ...values: unknown[]) => {
    conditions.push(condition);
    params.push(...values);
  };
  if (filter.namespace) add("namespace = ?", filter.namespace);
  if (filter.operation) add("operation = ?", filter.operation);
  if (filter.model) add("provider = ? and model = ?", filter.model.provider, filter.model.model);
  const where = conditions.length === 0 ? "" : `where ${conditions.join(" and ")}`;
  const removed = await counted(em, `delete from {cache_entries} ${where} returning 1`, params);
  if (conditions.length === 0) await sql(em, `update {cache_state} set purged_at = ? where id = 1`, [at]);
  return removed;
}

/**
 * The cache as every instance shares it: entries alive at `at` and their bytes, oldest and newest; hits and misses
 * are the runs that looked it up since the last purge of everything (so they never shrink as entries expire).
 */
export async function cacheStats(em: EntityManager, settings: AiSettings, at: Date): Promise<CacheStats> {
  const [entries] = await sql<{ entries: string; bytes: string; oldest: Date | null; newest: Date | null }>(
    em,
    `select count(*) as entries, coalesce(sum(bytes), 0) as bytes, min(created_at) as oldest, max(created_at) as newest
     from {cache_entries} where expires_at > ?`,
    [at],
  );
  const [lookups] = await sql<{ hits: string; misses: string }>(
    em,
    `select count(*) filter (where cache_hit) as hits, count(*) filter (where not cache_hit) as misses
     from {runs} where cache_lookup and created_at >= (select purged_at from {cache_state} where id = 1)`,
  );
  const time = (value: Date | null) => (value === null ? undefined : timestampFromDate(new Date(value)));
  return create(CacheStatsSchema, {
    entries: Number(entries.entries),
    bytes: BigInt(entries.bytes),
    hits: BigInt(lookups.hits),
    misses: BigInt(lookups.misses),
    ttlSeconds: settings.cacheTtlSeconds,
    oldest: time(entries.oldest),
    newest: time(entries.newest),
  });
}

/** Removes up to `limit` entries expired at `at` (the sweep), answering how many. */
export async function removeExpiredEntries(em: EntityManager, at: Date, limit: number): Promise<number> {
  return counted(
    em,
    `delete from {cache_entries} where key in (select key from {cache_entries} where expires_at <= ? limit ?)
     returning 1`,
    [at, limit],
  );
}

/** How many rows a `delete … returning 1` removed, without reading them. */
async function counted(em: EntityManager, statement: string, params: unknown[]): Promise<number> {
  const [row] = await sql<{ count: string }>(em, `with removed as (${statement}) select count(*) from removed`, params);
  return Number(row.count);
}
