import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager, RequiredEntityData } from "@mikro-orm/postgresql";
import {
  AliasKind,
  AliasSchema,
  type Instrument,
  InstrumentKind,
  InstrumentSchema,
  InstrumentStatus,
} from "../../../gen/pf/trade/v1/instruments_pb.js";
import { sql } from "../../kit/db/sql.js";
import { normalizeSymbol } from "../domain/symbols.js";
import { valueOf } from "../domain/vocabulary.js";
import { InstrumentAliasRow, InstrumentRow } from "./entities.js";

/** The instrument of a symbol (normalised first), or null. */
export async function instrumentBySymbol(em: EntityManager, symbol: string): Promise<InstrumentRow | null> {
  const normalized = normalizeSymbol(symbol);
  if (normalized === "") return null;
  return em.findOne(InstrumentRow, { symbol: normalized });
}

/** The instrument of this id (one the caller found by its ticker or an observation names). */
export const instrumentById = (em: EntityManager, id: string) => em.findOneOrFail(InstrumentRow, { id });

/** Writes a new instrument. */
export async function insertInstrument(
  em: EntityManager,
  instrument: RequiredEntityData<InstrumentRow>,
): Promise<InstrumentRow> {
  const row = em.create(InstrumentRow, instrument);
  await em.flush();
  return row;
}

/** Writes changes to an instrument (those made on the row, and `changes`) in the caller's transaction. */
export async function changeInstrument(
  em: EntityManager,
  row: InstrumentRow,
  changes: Partial<InstrumentRow> = {},
): Promise<void> {
  Object.assign(row, changes);
  await em.flush();
}

/** Whether the instrument holds this alias already (of this kind, as normalised). */
export async function hasAlias(em: EntityManager, instrumentId: string, kind: string, normalized: string) {
  return (await em.findOne(InstrumentAliasRow, { instrumentId, kind, normalized })) !== null;
}

/** Writes an alias of an instrument, and when the instrument changed. */
export async function insertAlias(
  em: EntityManager,
  row: InstrumentRow,
  alias: Pick<InstrumentAliasRow, "kind" | "normalized" | "value">,
  at: Date,
): Promise<void> {
  em.create(InstrumentAliasRow, { instrumentId: row.id, ...alias, createdAt: at });
  await changeInstrument(em, row, { updatedAt: at });
}

/** An instrument's aliases, by kind then normalised value. */
export function aliasesOf(em: EntityManager, instrumentIds: string[]): Promise<InstrumentAliasRow[]> {
  if (instrumentIds.length === 0) return Promise.resolve([]);
  return em.find(
    InstrumentAliasRow,
    { instrumentId: { $in: instrumentIds } },
    { orderBy: { kind: "asc", normalized: "asc" } },
  );
}

/** Instruments by id, by symbol. */
export function instrumentsById(em: EntityManager, ids: string[]): Promise<InstrumentRow[]> {
  if (ids.length === 0) return Promise.resolve([]);
  return em.find(InstrumentRow, { id: { $in: [...new Set(ids)] } }, { orderBy: { symbol: "asc" } });
}

type IdRow = { id: string };

/** Instruments whose own CIK is `cik` or that carry it as a CIK alias. */
export async function idsByCik(em: EntityManager, cik: string): Promise<string[]> {
  return idsOf(
    em,
    `select id from {instruments} where cik = ?
     union select instrument_id from {instrument_aliases} where kind = 'cik' and normalized = ?`,
    [cik, cik],
  );
}

/** Instruments whose symbol is `ticker` or that carry it as a ticker alias. */
export async function idsByTicker(em: EntityManager, ticker: string): Promise<string[]> {
  return idsOf(
    em,
    `select id from {instruments} where symbol = ?
     union select instrument_id from {instrument_aliases} where kind = 'ticker' and normalized = ?`,
    [ticker, ticker],
  );
}

async function idsOf(em: EntityManager, text: string, params: string[]): Promise<string[]> {
  const rows = await sql<IdRow>(em, text, params);
  return rows.map((row) => row.id);
}

/** Instruments as answered, with their aliases, in the order of `ids` (duplicates dropped). */
export async function instrumentAnswers(em: EntityManager, ids: string[]): Promise<Instrument[]> {
  const rows = await instrumentsById(em, ids);
  const aliases = await aliasesOf(
    em,
    rows.map((row) => row.id),
  );
  return rows.map((row) =>
    instrumentToProto(
      row,
      aliases.filter((alias) => alias.instrumentId === row.id),
    ),
  );
}

/** An instrument row as the proto message. */
export function instrumentToProto(
  row: Omit<InstrumentRow, "nameKey">,
  aliases: Pick<InstrumentAliasRow, "kind" | "value" | "normalized">[] = [],
): Instrument {
  return create(InstrumentSchema, {
    id: row.id,
    symbol: row.symbol,
    name: row.name,
    kind: valueOf(InstrumentKind, row.kind),
    exchange: row.exchange,
    cik: row.cik ?? "",
    currency: row.currency,
    status: valueOf(InstrumentStatus, row.status),
    aliases: aliases.map((alias) =>
      create(AliasSchema, {
        kind: valueOf(AliasKind, alias.kind),
        value: alias.value,
        normalized: alias.normalized,
      }),
    ),
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
  });
}

/** Another instrument than `except` already answering to this ticker (symbol or alias) or CIK (own or alias). */
export async function aliasHolder(
  em: EntityManager,
  kind: "ticker" | "cik",
  value: string,
  except: string,
): Promise<string | undefined> {
  const holders = kind === "ticker" ? await idsByTicker(em, value) : await idsByCik(em, value);
  return holders.find((id) => id !== except);
}
