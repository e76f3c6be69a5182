import { invalid } from "../../kit/handler/problem.js";
import { normalizeCik, normalizeName, normalizeSymbol } from "./symbols.js";

/** One step of resolution: what it compares, and the normalised value. */
export interface ResolveStep {
  by: "cik" | "ticker" | "name";
  value: string;
}

/** What a resolve request asks: `q` tried every way, or `cik`, `ticker`, `name` each only its own way. */
export interface ResolveQuery {
  q: string;
  cik: string;
  ticker: string;
  name: string;
}

/**
 * The steps of a resolution, in the spec's deterministic order: CIK, then
 * ticker, then exact normalised name. `q` contributes every form it can be
 * (digits are also a ticker and a name); a named field only its own, and is
 * 400 when it cannot be one. Nothing asked: 400 naming `q`.
 */
export function resolveSteps(query: ResolveQuery): ResolveStep[] {
  if (query.q.trim() === "" && query.cik === "" && query.ticker === "" && query.name === "") {
    throw invalid("q", "q (or cik, ticker or name) is required");
  }
  const named = (field: "cik" | "ticker" | "name", normalize: (raw: string) => string) => {
    if (query[field] === "") return query.q.trim() === "" ? "" : normalize(query.q);
    const value = normalize(query[field]);
    if (value === "") throw invalid(field, `${field} is not a ${field}`);
    return value;
  };
  const steps: ResolveStep[] = [
    { by: "cik", value: named("cik", normalizeCik) },
    { by: "ticker", value: named("ticker", normalizeSymbol) },
    { by: "name", value: named("name", normalizeName) },
  ];
  return steps.filter((step) => step.value !== "");
}
