import { beforeAll, describe, expect, it } from "vitest";
import type { HttpAnswer } from "../support/platform.js";
import { usePlatform } from "../support/platform.js";
import { ALL_TRADE, freshSymbol, instrument, person, TRADE_ENV, tradeCaller } from "./support.js";

const t = usePlatform({ services: ["trade"], env: TRADE_ENV });
let web: string;
let as: ReturnType<typeof tradeCaller>;

beforeAll(async () => {
  web = await t.token({
    kind: "service",
    svc: "web",
    caps: [...ALL_TRADE, "trade.context.read", "trade.context.propose"],
  });
  as = tradeCaller(t, () => web);
});

/** The fields a 400 request.invalid lists in `errors`, in order. */
function faultFields(answer: HttpAnswer): string[] {
  expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ status: 400, code: "request.invalid" });
  return (answer.body.errors as { field: string }[]).map((fault) => fault.field);
}

describe("trade's input rules, declared in the contract", () => {
  it("alert rules and observations: every rule a request breaks, each naming its field", async () => {
    const rule = await as("POST", "/alerts", person("r"), {
      kind: 99,
      metric: "Price",
      unit: "u s",
      currency: "usd",
      level: "1e3",
      direction: 7,
      filing_type: "-10K",
    });
    expect(rule.body.field).toBe("symbol");
    expect(faultFields(rule)).toEqual([
      "symbol",
      "kind",
      "metric",
      "unit",
      "currency",
      "level",
      "direction",
      "filing_type",
    ]);

    const observation = await as("POST", "/observations", undefined, {
      value: "1,5",
      unit: "u".repeat(33),
      currency: "usd",
      source_key: " feed",
      source_ref: "r".repeat(501),
    });
    expect(faultFields(observation)).toEqual([
      "symbol",
      "metric",
      "value",
      "unit",
      "currency",
      "observed_at",
      "retrieved_at",
      "source_key",
      "source_ref",
    ]);
  });

  it("instruments and resolution, before an unknown instrument's 404", async () => {
    const made = await as("POST", "/instruments", undefined, {
      name: "\t",
      kind: "INSTRUMENT_KIND_UNSPECIFIED",
      exchange: "x".repeat(41),
      cik: "12a",
      currency: "usd",
    });
    expect(faultFields(made)).toEqual(["symbol", "name", "kind", "exchange", "cik", "currency"]);

    const missing = freshSymbol("NO");
    const patch = await as("PATCH", `/instruments/${missing}`, undefined, {
      name: "n".repeat(201),
      kind: 42,
      status: "INSTRUMENT_STATUS_UNSPECIFIED",
    });
    expect(faultFields(patch)).toEqual(["name", "kind", "status"]);

    const alias = await as("POST", `/instruments/${missing}/aliases`, undefined, { alias: "a".repeat(201) });
    expect(faultFields(alias)).toEqual(["alias_kind", "alias"]);

    const resolve = await t.http(
      "GET",
      `/trade/api/v1/instruments/resolve?q=${"q".repeat(201)}&name=${"n".repeat(201)}`,
    );
    expect(faultFields(resolve)).toEqual(["q", "name"]);
  });

  it("watchlists, context decisions and proposals, and the listings' page sizes", async () => {
    const owner = person("w");
    expect(faultFields(await as("POST", "/watchlists", owner, { name: " " }))).toEqual(["name"]);
    expect(faultFields(await as("PATCH", "/watchlists/wlt_NOT-VALID", owner, { name: "" }))).toEqual(["id", "name"]);

    const { symbol } = await instrument(t, web);
    const propose = await as("POST", `/instruments/${symbol}/context`, undefined, {
      propose: { text: " ", citations: [1] },
    });
    expect(faultFields(propose)).toEqual(["propose.text", "propose.input_id"]);
    const approve = await as("POST", `/instruments/${symbol}/context`, undefined, {
      approve: { revision: 0, note: "n".repeat(501) },
    });
    expect(faultFields(approve)).toEqual(["approve.revision", "approve.note"]);
    expect(faultFields(await as("POST", `/instruments/${symbol}/context`, undefined, { publish: {} }))).toEqual([
      "publish.revision",
    ]);

    expect(faultFields(await as("GET", "/alerts?limit=0", owner))).toEqual(["limit"]);
    expect(faultFields(await as("GET", "/alerts/deliveries?limit=201", owner))).toEqual(["limit"]);
    expect(faultFields(await as("GET", "/watchlists?limit=-1", owner))).toEqual(["limit"]);
  });
});
