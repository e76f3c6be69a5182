import { describe, expect, it } from "vitest";
import { problemOf } from "../../services/kit/handler/problem.js";
import { checkCitations } from "../../services/trade/domain/citations.js";
import { disclosureOf, NOT_ADVICE } from "../../services/trade/domain/disclosure.js";
import { recommendationIn } from "../../services/trade/domain/recommendations.js";

/** The pure rules of market context: recommendation refusal, citations, disclosure. */
describe("text reading as a recommendation to trade", () => {
  const refused: [string, string][] = [
    ["Buy AAPL before earnings.", "Buy"],
    ["We think investors should SELL now.", "SELL"],
    ["Our view: strong buy.", "strong buy"],
    ["A price target of $250 looks fair.", "price target"],
    ["We recommend holding through the split.", "We recommend"],
    ["You should buy the stock on weakness.", "You should buy"],
    ["Accumulate on dips.", "Accumulate"],
    ["The stock is overweight in our model portfolio.", "overweight"],
    ["It should outperform its peers.", "outperform"],
    ["Traders may go long into the print.", "go long"],
    ["Set a stop-loss at 180.", "stop-loss"],
    ["Take profits above 200.", "Take profits"],
    ["A good entry point is 150.", "entry point"],
    ["Buy the dip.", "Buy"],
    // A reported fact in one sentence does not excuse advice in the next.
    ["Analysts raised their targets. Buy now.", "Buy"],
    // An imperative is never a reported fact, whatever verb stands before it.
    ["Goldman upgraded it, so you should buy.", "you should buy"],
    ["Line one\nsell", "sell"],
    ["Short the stock into the print.", "Short the stock"],
    ["Investors could load up on shares below 150.", "load up on"],
    ["Add to your position on weakness.", "Add to your position"],
    ["Now is the time to open a position.", "open a position"],
    ["You should hold through the split.", "You should hold"],
    ["It is our top pick for 2027.", "top pick"],
    ["We see it at equal-weight.", "equal-weight"],
    ["Our price objective is 210 USD.", "price objective"],
  ];
  const allowed = [
    "The company sells chips and sold 5% of its stake in March.",
    "Apple announced a $90bn buy-back and the sell-off eased.",
    "Analysts raised their price target to $200 last week.",
    "Morgan Stanley upgraded the shares to overweight on Monday.",
    "The fund reiterated its hold rating.",
    "The stock outperformed the index in 2025.",
    "Revenue rose 12% [1]; margins narrowed [2].",
    "Buyers and sellers met at 187.12 USD.",
    "Short interest rose to 3% of the float [1].",
    "Barclays named it a top pick in January.",
    "The broker assigned an equal-weight rating.",
    "",
  ];

  it.each(refused)("refuses %j, naming %j", (text, phrase) => {
    expect(recommendationIn(text)).toBe(phrase);
  });

  it.each(allowed)("allows %j", (text) => {
    expect(recommendationIn(text)).toBeUndefined();
  });
});

describe("citations", () => {
  const code = (work: () => unknown) => {
    try {
      work();
      return "answered";
    } catch (error) {
      return problemOf(error).code;
    }
  };

  it("answers the cited numbers in order when each resolves once and every marker is cited", () => {
    expect(checkCitations([3, 1], "Revenue rose [1] while [3] shows it.", 3)).toEqual([1, 3]);
  });

  it.each([
    ["no citation", [], "text", 3],
    ["a number past the input", [4], "text", 3],
    ["zero", [0], "text", 3],
    ["a negative", [-1], "text", 3],
    ["an empty input", [1], "text", 0],
    ["a repeat", [1, 1], "text", 3],
    ["a marker not cited", [1], "see [2]", 3],
  ])("refuses %s as 422 context.citation_invalid", (_case, citations, text, count) => {
    expect(code(() => checkCitations(citations as number[], text as string, count as number))).toBe(
      "context.citation_invalid",
    );
  });
});

describe("disclosure", () => {
  const at = new Date("2026-12-03T10:00:00.000Z");
  const ai = {
    kind: "ai",
    workflow: "trade.summarize_market_context",
    runId: "run_7",
    stubProvider: false,
    service: "svc:ai",
    requestedBy: "usr_asker",
  } as const;

  it("names the workflow and run, the approving editor and when, and ends with the fixed line", () => {
    const text = disclosureOf(ai, { approver: "usr_editor", at, approved: true });
    expect(text).toContain("trade.summarize_market_context (run run_7)");
    expect(text).toContain("Approved by usr_editor");
    expect(text).toContain("2026-12-03T10:00:00.000Z");
    expect(text.endsWith(NOT_ADVICE)).toBe(true);
    expect(text).not.toContain("usr_asker");
  });

  it("says when it awaits review, and names a person author or a stub provider", () => {
    expect(disclosureOf(ai, undefined)).toContain("Awaiting review");
    expect(disclosureOf({ ...ai, stubProvider: true }, undefined)).toContain("stub provider");
    expect(disclosureOf({ kind: "person", person: "usr_writer" }, undefined)).toContain("Written by usr_writer");
  });
});
