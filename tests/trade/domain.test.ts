import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { AlertKind, AlertRuleRequestSchema } from "../../gen/pf/trade/v1/alerts_pb.js";
import { ObservationRequestSchema } from "../../gen/pf/trade/v1/observations_pb.js";
import { TradeService } from "../../gen/pf/trade/v1/trade_pb.js";
import { inputFaults } from "../../services/kit/rpc/input.js";
import { resolveSteps } from "../../services/trade/domain/resolve.js";
import { normalizeCik, normalizeName, normalizeSymbol, requireSymbol } from "../../services/trade/domain/symbols.js";
import { ruleFields } from "../../services/trade/domain/alerts.js";

const none = { q: "", cik: "", ticker: "", name: "" };

describe("symbols, CIKs and names", () => {
  it.each([
    ["brk.b", "BRK.B"],
    ["BRK-B", "BRK.B"],
    ["BRK/B", "BRK.B"],
    [" aapl ", "AAPL"],
    ["^GSPC", "^GSPC"],
    ["A B", ""],
    ["BRK.B.C", ""],
    ["", ""],
  ])("symbol %j → %j", (raw, normalized) => {
    expect(normalizeSymbol(raw)).toBe(normalized);
  });

  it("a route's word is never a symbol", () => {
    expect(() => requireSymbol("symbol", "resolve")).toThrow(/route/);
  });

  it.each([
    ["320193", "0000320193"],
    ["CIK0000320193", "0000320193"],
    ["12345678901", ""],
    ["12a", ""],
  ])("CIK %j → %j", (raw, normalized) => {
    expect(normalizeCik(raw)).toBe(normalized);
  });

  it("names: NFKC, case-folded, whitespace collapsed; normalising twice changes nothing", () => {
    expect(normalizeName("  Ａｐｐｌｅ\tInc. ")).toBe("apple inc.");
    fc.assert(fc.property(fc.string(), (raw) => normalizeName(normalizeName(raw)) === normalizeName(raw)));
  });
});

describe("resolution steps", () => {
  it("q is tried as CIK, then ticker, then name, in that order", () => {
    expect(resolveSteps({ ...none, q: "320193" })).toEqual([
      { by: "cik", value: "0000320193" },
      { by: "ticker", value: "320193" },
      { by: "name", value: "320193" },
    ]);
    expect(resolveSteps({ ...none, q: "Apple Inc" }).map((step) => step.by)).toEqual(["name"]);
  });

  it("a named field is only its own kind, 400 naming it when it cannot be one", () => {
    expect(resolveSteps({ ...none, ticker: "aapl" })).toEqual([{ by: "ticker", value: "AAPL" }]);
    expect(() => resolveSteps({ ...none, cik: "x" })).toThrow(/cik/);
    expect(() => resolveSteps(none)).toThrow(/q/);
  });
});

describe("decimals as stated (the contract's rule on value and level)", () => {
  const at = { seconds: 1_795_000_000n, nanos: 0 };
  const faultsOf = (value: string) =>
    inputFaults(
      TradeService.method.recordObservation,
      create(ObservationRequestSchema, {
        symbol: "AAPL",
        metric: "price",
        value,
        unit: "USD",
        observedAt: at,
        retrievedAt: at,
        sourceKey: "feed",
        sourceRef: "r1",
      }),
    ).map((fault) => fault.field);

  it.each(["0", "-1", "+1.5", "12.", ".5", "0012.3400", "123456789012345678901234567890.123456789"])(
    "keeps %j",
    (text) => {
      expect(faultsOf(text)).toEqual([]);
    },
  );

  it.each(["", "1e3", "1,5", " 1", "1 ", "NaN", "Infinity", "0x1", "1.2.3", "-", ".", "１"])(
    "refuses %j naming the field",
    (text) => {
      expect(faultsOf(text)).toEqual(["value"]);
    },
  );

  it("over 64 characters is refused, a level's too", () => {
    expect(faultsOf("1".repeat(65))).toEqual(["value"]);
    const rule = create(AlertRuleRequestSchema, { symbol: "AAPL", kind: AlertKind.THRESHOLD, level: "1".repeat(65) });
    expect(inputFaults(TradeService.method.createAlert, rule).map((fault) => fault.field)).toEqual(["level"]);
  });
});

describe("rule fields", () => {
  const base = { kind: "", metric: "", unit: "", currency: "", level: "", direction: "", filingType: "" };
  it("threshold defaults to either direction and keeps the level as stated", () => {
    expect(ruleFields({ ...base, kind: "threshold", metric: "price", unit: "USD", level: "10.50" })).toMatchObject({
      direction: "either",
      levelText: "10.50",
    });
  });
  it("refuses another kind's fields by name", () => {
    expect(() => ruleFields({ ...base, kind: "new_document", level: "1" })).toThrow(/level/);
    expect(() => ruleFields({ ...base, kind: "filing_type", filingType: "10-K", metric: "x" })).toThrow(/metric/);
  });
  it("refuses a kind's missing fields by name", () => {
    expect(() => ruleFields({ ...base, kind: "threshold", metric: "price", unit: "USD" })).toThrow(/level is required/);
    expect(() => ruleFields({ ...base, kind: "filing_type" })).toThrow(/filing_type is required/);
  });
});
