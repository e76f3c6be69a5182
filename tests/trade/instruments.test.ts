import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { ALL_TRADE, freshSymbol, instrument, person, TRADE_ENV } from "./support.js";

const t = usePlatform({ services: ["trade"], env: TRADE_ENV });
let web: string;
const manage = (method: string, path: string, body: unknown, headers: Record<string, string> = {}, token = web) =>
  t.http(method, `/trade/api/v1/instruments${path}`, { token, body, headers });
const resolve = (query: string, token?: string) =>
  t.http("GET", `/trade/api/v1/instruments/resolve?${query}`, { token });

beforeAll(async () => {
  web = await t.token({ kind: "service", svc: "web", caps: ALL_TRADE });
});

describe("instrument management", () => {
  it("creates (201) with the symbol normalised, patches and answers 409 instrument.exists for a symbol taken", async () => {
    const raw = `${freshSymbol("N")}-b`;
    const made = await manage("POST", "", {
      symbol: raw,
      name: "  Class  B Shares ",
      kind: "INSTRUMENT_KIND_EQUITY",
      cik: "320193",
      currency: "USD",
    });
    expect(made.status).toBe(201);
    const symbol = raw.toUpperCase().replace("-", ".");
    expect(made.body.instrument).toMatchObject({
      symbol,
      name: "Class  B Shares",
      kind: "INSTRUMENT_KIND_EQUITY",
      cik: "0000320193",
      currency: "USD",
      status: "INSTRUMENT_STATUS_ACTIVE",
    });
    expect(made.body.instrument.id).toMatch(/^ins_/);
    const again = await manage("POST", "", {
      symbol: symbol.replace(".", "/"),
      name: "X",
      kind: "INSTRUMENT_KIND_ETF",
    });
    expect(again.body).toMatchObject({ status: 409, code: "instrument.exists" });
    const patched = await manage("PATCH", `/${symbol}`, { status: "INSTRUMENT_STATUS_INACTIVE", exchange: "XNAS" });
    expect(patched.status).toBe(200);
    expect(patched.body.instrument).toMatchObject({
      status: "INSTRUMENT_STATUS_INACTIVE",
      exchange: "XNAS",
      cik: "0000320193",
    });
    expect((await manage("PATCH", "/NOSUCH1", { name: "Y" })).body).toMatchObject({
      status: 404,
      code: "instrument.not_found",
    });
  });

  it("refuses malformed input naming the field", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: "A", kind: "INSTRUMENT_KIND_EQUITY" }, "symbol"],
      [{ symbol: "resolve", name: "A", kind: "INSTRUMENT_KIND_EQUITY" }, "symbol"],
      [{ symbol: "BAD SYMBOL", name: "A", kind: "INSTRUMENT_KIND_EQUITY" }, "symbol"],
      [{ symbol: freshSymbol(), kind: "INSTRUMENT_KIND_EQUITY" }, "name"],
      [{ symbol: freshSymbol(), name: "A" }, "kind"],
      [{ symbol: freshSymbol(), name: "A", kind: "INSTRUMENT_KIND_EQUITY", cik: "12a" }, "cik"],
      [{ symbol: freshSymbol(), name: "A", kind: "INSTRUMENT_KIND_EQUITY", currency: "usd" }, "currency"],
      [
        { symbol: freshSymbol(), name: "A", kind: "INSTRUMENT_KIND_EQUITY", status: "INSTRUMENT_STATUS_ACTIVE" },
        "status",
      ],
    ];
    for (const [body, field] of cases) {
      const answer = await manage("POST", "", body);
      expect(answer.body, JSON.stringify(body)).toMatchObject({ status: 400, code: "request.invalid", field });
    }
  });

  it("people need the editor list whatever their token; services acting for nobody manage", async () => {
    const outsider = person("out");
    const viaService = await manage(
      "POST",
      "",
      { symbol: freshSymbol(), name: "A", kind: "INSTRUMENT_KIND_FUND" },
      {
        "x-pf-subject": outsider,
      },
    );
    expect(viaService.body).toMatchObject({ status: 403, code: "auth.editor_required" });
    const own = await t.token({ kind: "user", sub: outsider });
    const ownToken = await manage(
      "POST",
      "",
      { symbol: freshSymbol(), name: "A", kind: "INSTRUMENT_KIND_FUND" },
      {},
      own,
    );
    expect(ownToken.body).toMatchObject({ status: 403, code: "auth.editor_required" });
    const editor = await t.token({ kind: "user", sub: "usr_editor1" });
    const byEditor = await manage(
      "POST",
      "",
      { symbol: freshSymbol(), name: "A", kind: "INSTRUMENT_KIND_FUND" },
      {},
      editor,
    );
    expect(byEditor.status).toBe(201);
    const named = await manage(
      "POST",
      "",
      { symbol: freshSymbol(), name: "A", kind: "INSTRUMENT_KIND_FUND" },
      {
        "x-pf-subject": "usr_editor1",
      },
    );
    expect(named.status).toBe(201);
    const { symbol } = byEditor.body.instrument;
    expect((await manage("PATCH", `/${symbol}`, { name: "B" }, { "x-pf-subject": outsider })).body.code).toBe(
      "auth.editor_required",
    );
    const alias = { alias_kind: "ALIAS_KIND_NAME", alias: "Bee" };
    expect((await manage("POST", `/${symbol}/aliases`, alias, {}, own)).body.code).toBe("auth.editor_required");
  });

  it("aliases: ticker and CIK unique across instruments (409 alias.conflict), names may repeat, a repeat answers 200", async () => {
    const a = await instrument(t, web);
    const b = await instrument(t, web);
    const ticker = freshSymbol("K");
    const added = await manage("POST", `/${a.symbol}/aliases`, {
      alias_kind: "ALIAS_KIND_TICKER",
      alias: ticker.toLowerCase(),
    });
    expect(added.status).toBe(201);
    expect(added.body.instrument.aliases).toContainEqual({
      kind: "ALIAS_KIND_TICKER",
      value: ticker.toLowerCase(),
      normalized: ticker,
    });
    const repeat = await manage("POST", `/${a.symbol}/aliases`, { alias_kind: "ALIAS_KIND_TICKER", alias: ticker });
    expect(repeat.status).toBe(200);
    const taken = await manage("POST", `/${b.symbol}/aliases`, { alias_kind: "ALIAS_KIND_TICKER", alias: ticker });
    expect(taken.body).toMatchObject({ status: 409, code: "alias.conflict" });
    // Another instrument's symbol is a ticker too.
    const symbolTaken = await manage("POST", `/${b.symbol}/aliases`, {
      alias_kind: "ALIAS_KIND_TICKER",
      alias: a.symbol,
    });
    expect(symbolTaken.body).toMatchObject({ status: 409, code: "alias.conflict" });
    const cik = String(Date.now()).slice(-9);
    expect((await manage("POST", `/${a.symbol}/aliases`, { alias_kind: "ALIAS_KIND_CIK", alias: cik })).status).toBe(
      201,
    );
    const cikTaken = await manage("POST", `/${b.symbol}/aliases`, {
      alias_kind: "ALIAS_KIND_CIK",
      alias: `CIK${cik.padStart(10, "0")}`,
    });
    expect(cikTaken.body).toMatchObject({ status: 409, code: "alias.conflict" });
    for (const target of [a, b]) {
      const name = await manage("POST", `/${target.symbol}/aliases`, {
        alias_kind: "ALIAS_KIND_NAME",
        alias: "Shared Name",
      });
      expect(name.status).toBe(201);
    }
    const bad = await manage("POST", `/${a.symbol}/aliases`, { alias_kind: "ALIAS_KIND_CIK", alias: "abc" });
    expect(bad.body).toMatchObject({ status: 400, field: "alias" });
    const noKind = await manage("POST", `/${a.symbol}/aliases`, { alias: "abc" });
    expect(noKind.body).toMatchObject({ status: 400, field: "alias_kind" });
  });

  it("concurrent ticker aliases on two instruments: exactly one wins", async () => {
    const [a, b] = [await instrument(t, web), await instrument(t, web)];
    const ticker = freshSymbol("R");
    const answers = await Promise.all(
      [a, b].map((target) =>
        manage("POST", `/${target.symbol}/aliases`, { alias_kind: "ALIAS_KIND_TICKER", alias: ticker }),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
  });
});

describe("resolve", () => {
  it("anonymous readers resolve by CIK, then ticker, then exact normalised name", async () => {
    const cik = String(Date.now()).slice(-8);
    const a = await instrument(t, web, { cik, name: "Ｆｕｌｌ  Width Corp" });
    const byCik = await resolve(`q=${cik}`);
    expect(byCik.status).toBe(200);
    expect(byCik.body).toMatchObject({
      outcome: "RESOLVE_OUTCOME_MATCHED",
      matched_by: "cik",
      instrument: { id: a.id },
    });
    expect((await resolve(`cik=${cik.padStart(10, "0")}`)).body.instrument.id).toBe(a.id);
    const byTicker = await resolve(`q=${a.symbol.toLowerCase()}`);
    expect(byTicker.body).toMatchObject({
      outcome: "RESOLVE_OUTCOME_MATCHED",
      matched_by: "ticker",
      instrument: { id: a.id },
    });
    // NFKC, case-folded, whitespace collapsed; nothing fuzzy.
    const byName = await resolve(`q=${encodeURIComponent(" full width   CORP ")}`);
    expect(byName.body).toMatchObject({
      outcome: "RESOLVE_OUTCOME_MATCHED",
      matched_by: "name",
      instrument: { id: a.id },
    });
    expect((await resolve(`q=${encodeURIComponent("Full Width")}`)).body).toEqual({
      outcome: "RESOLVE_OUTCOME_NONE",
      candidates: [],
      matched_by: "",
    });
  });

  it("several matches at a step answer ambiguous with the candidates, none chosen", async () => {
    const cik = String(Date.now() + 7).slice(-8);
    const [a, b] = [
      await instrument(t, web, { cik, name: "Twin A" }),
      await instrument(t, web, { cik, name: "Twin B" }),
    ];
    const shared = await resolve(`cik=${cik}`);
    expect(shared.body.outcome).toBe("RESOLVE_OUTCOME_AMBIGUOUS");
    expect(shared.body.instrument).toBeUndefined();
    expect(shared.body.candidates.map((c: { id: string }) => c.id).sort()).toEqual([a.id, b.id].sort());
    const name = `Same Name ${Date.now()}`;
    await instrument(t, web, { name });
    await instrument(t, web, { name: name.toUpperCase() });
    const byName = await resolve(`name=${encodeURIComponent(name)}`);
    expect(byName.body).toMatchObject({ outcome: "RESOLVE_OUTCOME_AMBIGUOUS", matched_by: "name" });
    expect(byName.body.candidates).toHaveLength(2);
    // The order decides: a CIK match wins over a name match of another instrument.
    const c = await instrument(t, web, { name: cik });
    const first = await resolve(`q=${cik}`);
    expect(first.body.outcome).toBe("RESOLVE_OUTCOME_AMBIGUOUS");
    expect(first.body.candidates.map((x: { id: string }) => x.id)).not.toContain(c.id);
  });

  it("name aliases resolve, normalised the same way on write and read", async () => {
    const a = await instrument(t, web);
    const alias = `Ａlias\tName ${Date.now()}`;
    await manage("POST", `/${a.symbol}/aliases`, { alias_kind: "ALIAS_KIND_NAME", alias });
    const found = await resolve(
      `name=${encodeURIComponent(alias.normalize("NFKC").toUpperCase().replace("\t", "   "))}`,
    );
    expect(found.body).toMatchObject({ outcome: "RESOLVE_OUTCOME_MATCHED", instrument: { id: a.id } });
  });

  it("400 naming the field when nothing is asked or a named field cannot be one", async () => {
    expect((await resolve("")).body).toMatchObject({ status: 400, code: "request.invalid", field: "q" });
    expect((await resolve("cik=abc")).body).toMatchObject({ status: 400, field: "cik" });
    expect((await resolve(`q=${"x".repeat(201)}`)).body).toMatchObject({ status: 400, field: "q" });
  });
});
