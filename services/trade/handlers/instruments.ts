import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  AliasKind,
  InstrumentKind,
  type InstrumentManageRequest,
  InstrumentManageResultSchema,
  InstrumentStatus,
} from "../../../gen/pf/trade/v1/instruments_pb.js";
import type { TradeService } from "../../../gen/pf/trade/v1/trade_pb.js";
import { advisoryLock } from "../../kit/db/advisory-lock.js";
import { newId } from "../../kit/handler/ids.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { answerStatus } from "../../kit/handler/status.js";
import type { TradeContext } from "../context.js";
import {
  aliasHolder,
  changeInstrument,
  hasAlias,
  insertAlias,
  insertInstrument,
  instrumentAnswers,
  instrumentBySymbol,
} from "../db/instruments.js";
import { normalizeCik, normalizeName, normalizeSymbol, requireSymbol } from "../domain/symbols.js";
import { wordOf } from "../domain/vocabulary.js";

type InstrumentHandlers = Pick<ServiceImpl<typeof TradeService>, "createInstrument" | "updateInstrument" | "addAlias">;

/** All instrument and alias writes take this lock: the cross-instrument alias checks then never race. */
const LOCK = "trade.instruments";

/** Create's name and kind: the message is shared with patch, where unset means unchanged, so no rule requires them. */
const required = <T>(field: string, value: T | undefined): T => {
  if (value === undefined) throw invalid(field, `${field} is required`);
  return value;
};
const cikOf = (raw: string) => (raw.trim() === "" ? null : normalizeCik(raw));

const instrumentNotFound = (symbol: string) =>
  problem(404, "instrument.not_found", `There is no instrument ${symbol}.`, { symbol });

/**
 * Instrument management: people must be on the market-context editor list
 * (the declared `editor` relation, whatever their token); services and
 * first-party apps acting for nobody may manage too. Ticker and CIK aliases are unique across
 * instruments (409 alias.conflict), names may repeat.
 */
export function instrumentHandlers(ctx: TradeContext): InstrumentHandlers {
  const answer = async (em: EntityManager, id: string) =>
    create(InstrumentManageResultSchema, { instrument: (await instrumentAnswers(em, [id]))[0] });

  return {
    async createInstrument(request, call) {
      const symbol = requireSymbol("symbol", request.symbol);
      const name = required("name", request.name).trim();
      const kind = wordOf(InstrumentKind, required("kind", request.kind));
      const exchange = (request.exchange ?? "").trim();
      const cik = cikOf(request.cik ?? "");
      const currency = request.currency ?? "";
      return ctx.transaction(async (em) => {
        await advisoryLock(em, LOCK);
        const existing = await instrumentBySymbol(em, symbol);
        if (existing) {
          const [instrument] = await instrumentAnswers(em, [existing.id]);
          throw problem(409, "instrument.exists", `${symbol} exists already.`, { symbol, id: instrument.id });
        }
        if (await aliasHolder(em, "ticker", symbol, "")) throw aliasConflict("symbol", symbol);
        const at = ctx.clock.now();
        const row = await insertInstrument(em, {
          id: newId("ins"),
          symbol,
          name,
          nameKey: normalizeName(name),
          kind,
          exchange,
          cik,
          currency,
          status: "active",
          createdAt: at,
          updatedAt: at,
        });
        return answer(em, row.id);
      });
    },

    async updateInstrument(request, call) {
      const symbol = requireSymbol("symbol", request.symbol);
      const name = request.name?.trim();
      const kind = request.kind === undefined ? undefined : wordOf(InstrumentKind, request.kind);
      const exchange = request.exchange?.trim();
      const cik = request.cik === undefined ? undefined : cikOf(request.cik);
      const { currency } = request;
      const status = request.status === undefined ? undefined : wordOf(InstrumentStatus, request.status);
      return ctx.transaction(async (em) => {
        await advisoryLock(em, LOCK);
        const row = await instrumentBySymbol(em, symbol);
        if (!row) throw instrumentNotFound(symbol);
        if (name !== undefined) Object.assign(row, { name, nameKey: normalizeName(name) });
        if (kind !== undefined) row.kind = kind;
        if (exchange !== undefined) row.exchange = exchange;
        if (cik !== undefined) row.cik = cik;
        if (currency !== undefined) row.currency = currency;
        if (status !== undefined) row.status = status;
        await changeInstrument(em, row, { updatedAt: ctx.clock.now() });
        return answer(em, row.id);
      });
    },

    async addAlias(request, call) {
      const symbol = requireSymbol("symbol", request.symbol);
      const { kind, normalized, value } = aliasOf(request);
      return ctx.transaction(async (em) => {
        await advisoryLock(em, LOCK);
        const row = await instrumentBySymbol(em, symbol);
        if (!row) throw instrumentNotFound(symbol);
        if (await hasAlias(em, row.id, kind, normalized)) {
          answerStatus(call, 200);
          return answer(em, row.id);
        }
        if (kind !== "name" && (await aliasHolder(em, kind, normalized, row.id))) throw aliasConflict("alias", value);
        await insertAlias(em, row, { kind, normalized, value }, ctx.clock.now());
        return answer(em, row.id);
      });
    },
  };
}

/** The alias of a request, normalised as resolution will compare it. */
function aliasOf(request: InstrumentManageRequest) {
  const kind = wordOf(AliasKind, request.aliasKind) as "ticker" | "cik" | "name";
  const value = request.alias.trim();
  const normalized =
    kind === "ticker" ? normalizeSymbol(value) : kind === "cik" ? normalizeCik(value) : normalizeName(value);
  if (normalized === "") throw invalid("alias", `alias is not a ${kind}`);
  return { kind, normalized, value };
}

function aliasConflict(field: string, value: string) {
  return problem(409, "alias.conflict", `${value} already names another instrument.`, { field, value });
}
