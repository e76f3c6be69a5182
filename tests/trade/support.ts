import type { TestPlatform } from "../support/platform.js";

/** Every trade capability of TradeService: the first-party web service's token. */
export const ALL_TRADE = [
  "trade.alert.read",
  "trade.alert.create",
  "trade.alert.delete",
  "trade.instrument.manage",
  "trade.instrument.resolve",
  "trade.observation.write",
  "trade.watchlist.read",
  "trade.watchlist.create",
  "trade.watchlist.update",
  "trade.watchlist.delete",
];

/** The people the test platforms seed as market-context editors (PF_TRADE_EDITORS). */
export const EDITORS = ["usr_a1", "usr_b1", "usr_editor1"];
export const TRADE_ENV = { PF_TRADE_EDITORS: EDITORS.join(",") };

let n = 0;
/** A fresh person id. */
export const person = (tag = "p") => `usr_${tag}${Date.now().toString(36)}${(n++).toString(36)}`;

/** A fresh symbol: letters only, unique within a run. */
export const freshSymbol = (tag = "T") =>
  `${tag}${(Date.now() % 1e6).toString(36)}${(n++).toString(36)}`
    .toUpperCase()
    .replace(/[^A-Z0-9]/g, "")
    .slice(0, 15);

/** Calls trade routes as the web service, for a person when `who` is given. */
export function tradeCaller(t: TestPlatform, token: () => string) {
  return (method: string, path: string, who?: string, body?: unknown) =>
    t.http(method, `/trade/api/v1${path}`, {
      token: token(),
      body,
      headers: who === undefined ? {} : { "x-pf-subject": who },
    });
}

/** Creates an instrument as a service acting for nobody; answers it. */
export async function instrument(
  t: TestPlatform,
  token: string,
  body: Record<string, unknown> = {},
): Promise<{ id: string; symbol: string }> {
  const answer = await t.http("POST", "/trade/api/v1/instruments", {
    token,
    body: { symbol: freshSymbol(), name: "Test Instrument", kind: "INSTRUMENT_KIND_EQUITY", ...body },
  });
  if (answer.status !== 201) throw new Error(`instrument failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.instrument;
}

let ref = 0;
/** An observation body with every required field. */
export function observationBody(
  symbol: string,
  value: string,
  observedAt: string,
  extra: Record<string, unknown> = {},
) {
  return {
    symbol,
    metric: "price",
    value,
    unit: "USD",
    currency: "USD",
    observed_at: observedAt,
    retrieved_at: "2026-12-01T12:00:00Z",
    source_key: "test-feed",
    source_ref: `ref-${Date.now()}-${ref++}`,
    ...extra,
  };
}
