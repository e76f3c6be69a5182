import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { ProviderSchema, type Provider } from "../../../gen/pf/ai/v1/usage_pb.js";
import { sql } from "../../kit/db/sql.js";
import { ProviderRow } from "./entities.js";

/** A provider by its key, or undefined. */
export async function providerByKey(em: EntityManager, key: string): Promise<ProviderRow | undefined> {
  return (await em.findOne(ProviderRow, { key }, { refresh: true })) ?? undefined;
}

/** Every provider, by key. */
export function allProviders(em: EntityManager): Promise<ProviderRow[]> {
  return em.find(ProviderRow, {}, { orderBy: { key: "asc" }, refresh: true });
}

/** What a registration sets; the breaker starts closed. */
export interface NewProvider {
  key: string;
  kind: string;
  baseUrl: string;
  apiKeyEnv: string;
  enabled: boolean;
  timeoutMs: number;
  maxRetries: number;
  breakerThreshold: number;
  breakerOpenMs: number;
  at: Date;
}

/** Registers a provider; undefined when its key is taken (nothing written). */
export async function insertProvider(em: EntityManager, provider: NewProvider): Promise<ProviderRow | undefined> {
  const inserted = await sql<{ key: string }>(
    em,
    `insert into {providers} (key, kind, base_url, api_key_env, enabled, timeout_ms, max_retries, breaker_threshold,
       breaker_open_ms, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     on conflict (key) do nothing
     returning key`,
    [
      provider.key,
      provider.kind,
      provider.baseUrl,
      provider.apiKeyEnv,
      provider.enabled,
      provider.timeoutMs,
      provider.maxRetries,
      provider.breakerThreshold,
      provider.breakerOpenMs,
      provider.at,
      provider.at,
    ],
  );
  return inserted.length === 0 ? undefined : providerByKey(em, provider.key);
}

/** What an update may change. */
export type ProviderChanges = Partial<
  Pick<
    ProviderRow,
    "baseUrl" | "apiKeyEnv" | "enabled" | "timeoutMs" | "maxRetries" | "breakerThreshold" | "breakerOpenMs"
  >
>;

/** Saves changes to a provider read (locked) in this transaction. */
export async function saveProvider(
  em: EntityManager,
  row: ProviderRow,
  changes: ProviderChanges,
  at: Date,
): Promise<ProviderRow> {
  em.assign(row, { ...changes, updatedAt: at });
  await em.flush();
  return row;
}

/**
 * A provider as its audit entries record it: its settings and breaker, its secret only as the variable's name
 * (the row holds no value to leak).
 */
export function providerAudited(row: ProviderRow): Record<string, unknown> {
  return {
    key: row.key,
    kind: row.kind,
    base_url: row.baseUrl,
    api_key_env: row.apiKeyEnv,
    enabled: row.enabled,
    timeout_ms: row.timeoutMs,
    max_retries: row.maxRetries,
    breaker_threshold: row.breakerThreshold,
    breaker_open_ms: row.breakerOpenMs,
    breaker_state: row.breakerState,
    breaker_failures: row.breakerFailures,
  };
}

/** A provider by its key, locked to the end of the transaction (its changes are decided one after the other). */
export async function lockedProvider(em: EntityManager, key: string): Promise<ProviderRow | undefined> {
  return (await em.findOne(ProviderRow, { key }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true })) ?? undefined;
}

/**
 * The provider as the contract answers it: its secret only as the variable's name and whether this process has it
 * set (`env` is the process's environment); the value is never read into the answer.
 */
export function providerToProto(row: ProviderRow, env: Readonly<Record<string, string | undefined>>): Provider {
  const at = (date: Date | null | undefined) => (date ? timestampFromDate(new Date(date)) : undefined);
  const value = row.apiKeyEnv === "" ? undefined : env[row.apiKeyEnv];
  return create(ProviderSchema, {
    key: row.key,
    kind: row.kind,
    baseUrl: row.baseUrl,
    apiKeyEnv: row.apiKeyEnv,
    apiKeyPresent: typeof value === "string" && value !== "",
    enabled: row.enabled,
    timeoutMs: row.timeoutMs,
    maxRetries: row.maxRetries,
    breaker: {
      state: row.breakerState,
      failures: row.breakerFailures,
      threshold: row.breakerThreshold,
      openMs: row.breakerOpenMs,
      openedAt: at(row.breakerOpenedAt),
      reopensAt: at(row.breakerReopensAt),
    },
    createdAt: at(row.createdAt),
    updatedAt: at(row.updatedAt),
  });
}
