import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { ModelSchema, type Model } from "../../../gen/pf/ai/v1/usage_pb.js";
import { sql } from "../../kit/db/sql.js";
import { ModelRow } from "./entities.js";

/** A model of a provider by its names, or undefined. */
export async function modelByName(em: EntityManager, provider: string, model: string): Promise<ModelRow | undefined> {
  return (await em.findOne(ModelRow, { provider, model }, { refresh: true })) ?? undefined;
}

/** The models, of one provider when named, by provider and name. */
export function modelsOf(em: EntityManager, provider: string): Promise<ModelRow[]> {
  return em.find(ModelRow, provider === "" ? {} : { provider }, {
    orderBy: { provider: "asc", model: "asc" },
    refresh: true,
  });
}

/** What a registration sets. */
export interface NewModel {
  provider: string;
  model: string;
  operations: string[];
  contextTokens: number;
  maxOutputTokens: number;
  inputMicrosPer1k: number;
  outputMicrosPer1k: number;
  enabled: boolean;
  at: Date;
}

/** Registers a model; undefined when it is registered already (nothing written). */
export async function insertModel(em: EntityManager, model: NewModel): Promise<ModelRow | undefined> {
  const inserted = await sql<{ model: string }>(
    em,
    `insert into {models} (provider, model, operations, context_tokens, max_output_tokens, input_micros_per_1k,
       output_micros_per_1k, enabled, created_at, updated_at)
     values (?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?, ?)
     on conflict (provider, model) do nothing
     returning model`,
    [
      model.provider,
      model.model,
      JSON.stringify(model.operations),
      model.contextTokens,
      model.maxOutputTokens,
      model.inputMicrosPer1k,
      model.outputMicrosPer1k,
      model.enabled,
      model.at,
      model.at,
    ],
  );
  return inserted.length === 0 ? undefined : modelByName(em, model.provider, model.model);
}

/** What an update may change. */
export type ModelChanges = Partial<
  Pick<
    ModelRow,
    "operations" | "contextTokens" | "maxOutputTokens" | "inputMicrosPer1k" | "outputMicrosPer1k" | "enabled"
  >
>;

/** Saves changes to a model read (locked) in this transaction. */
export async function saveModel(em: EntityManager, row: ModelRow, changes: ModelChanges, at: Date): Promise<ModelRow> {
  em.assign(row, { ...changes, updatedAt: at });
  await em.flush();
  return row;
}

/** A model as its audit entries record it. */
export function modelAudited(row: ModelRow): Record<string, unknown> {
  return {
    provider: row.provider,
    model: row.model,
    operations: row.operations,
    context_tokens: row.contextTokens,
    max_output_tokens: row.maxOutputTokens,
    input_micros_per_1k: Number(row.inputMicrosPer1k),
    output_micros_per_1k: Number(row.outputMicrosPer1k),
    enabled: row.enabled,
  };
}

/** A model locked to the end of the transaction, or undefined. */
export async function lockedModel(em: EntityManager, provider: string, model: string): Promise<ModelRow | undefined> {
  return (
    (await em.findOne(ModelRow, { provider, model }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true })) ??
    undefined
  );
}

/** The model as the contract answers it (prices as integers of micro-USD). */
export function modelToProto(row: ModelRow): Model {
  const at = (date: Date | null | undefined) => (date ? timestampFromDate(new Date(date)) : undefined);
  return create(ModelSchema, {
    provider: row.provider,
    model: row.model,
    operations: row.operations,
    contextTokens: row.contextTokens,
    maxOutputTokens: row.maxOutputTokens,
    inputMicrosPer1k: BigInt(row.inputMicrosPer1k),
    outputMicrosPer1k: BigInt(row.outputMicrosPer1k),
    enabled: row.enabled,
    createdAt: at(row.createdAt),
    updatedAt: at(row.updatedAt),
  });
}
