import type { Instrument } from "../../../gen/pf/trade/v1/instruments_pb.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import type { InstrumentAliasRow, InstrumentRow } from "./entities.js";
import { instrumentToProto } from "./instruments.js";

/** The kinds of resolution step, in the spec's order: CIK, then ticker, then exact normalised name. */
export type ResolveBy = "cik" | "ticker" | "name";

/** Instruments whose own column or an alias of the step's kind holds the value (names may match several). */
const idsBy = (by: ResolveBy, column: string) =>
  new HotRead<{ id: string }, [string]>(
    `resolve.${by}`,
    `select id from {instruments} where ${column} = $1
     union select instrument_id from {instrument_aliases} where kind = '${by}' and normalized = $1`,
  );

const lookups: Record<ResolveBy, HotRead<{ id: string }, [string]>> = {
  cik: idsBy("cik", "cik"),
  ticker: idsBy("ticker", "symbol"),
  name: idsBy("name", "name_key"),
};

type StoredInstrument = Omit<InstrumentRow, "nameKey" | "createdAt" | "updatedAt"> & {
  createdAt: string;
  updatedAt: string;
};

const instrumentsOf = new HotRead<StoredInstrument, [string[]]>(
  "resolve.instruments",
  `select id, symbol, name, kind, exchange, cik, currency, status, created_at as "createdAt", updated_at as "updatedAt"
     from {instruments} where id = any($1) order by symbol`,
);

const aliasesOf = new HotRead<Pick<InstrumentAliasRow, "instrumentId" | "kind" | "value" | "normalized">, [string[]]>(
  "resolve.aliases",
  `select instrument_id as "instrumentId", kind, value, normalized
     from {instrument_aliases} where instrument_id = any($1) order by kind, normalized`,
);

/** The instruments one resolution step finds (a hot read: resolve is open to anonymous readers). */
export async function resolvedIds(ctx: ReadContext, by: ResolveBy, value: string): Promise<string[]> {
  return (await lookups[by].run(ctx, value)).map((row) => row.id);
}

/** Instruments as answered, with their aliases, by symbol (a hot read). */
export async function readInstruments(ctx: ReadContext, ids: string[]): Promise<Instrument[]> {
  const [rows, aliases] = await Promise.all([instrumentsOf.run(ctx, ids), aliasesOf.run(ctx, ids)]);
  return rows.map((row) =>
    instrumentToProto(
      { ...row, createdAt: new Date(row.createdAt), updatedAt: new Date(row.updatedAt) },
      aliases.filter((alias) => alias.instrumentId === row.id),
    ),
  );
}
