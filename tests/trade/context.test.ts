import { describe, expect, it } from "vitest";
import { DocumentRow } from "../../services/trade/db/entities.js";
import { instrumentBySymbol } from "../../services/trade/db/instruments.js";
import type { TradeContext } from "../../services/trade/context.js";
import { newId } from "../../services/kit/handler/ids.js";
import { aiRun } from "../support/ai-runs.js";
import { usePlatform } from "../support/platform.js";
import { AI, aiDraft, as, contextKit, WORKFLOW } from "./context-support.js";
import { person, TRADE_ENV } from "./support.js";

/**
 * Market context through the gateway (analysis C.1, hardest rule 4, the AI
 * context gate), part one: the numbered input, AI authorship, the workflow,
 * citations, recommendation refusal. Review and publishing: context-review.test.ts.
 */
const t = usePlatform({ services: ["trade", "ai"], env: TRADE_ENV });
const { tokens, contextCall, withInput, proposed, runOf, aiBody } = contextKit(t);

describe("the numbered input", () => {
  it("numbers documents, then observations, newest first, and keeps the snapshot while nothing changes", async () => {
    const { symbol, input } = await withInput();
    expect(input).toMatchObject({ symbol, workflow: WORKFLOW });
    expect(input.input_id).toMatch(/^cin_/);
    expect(
      input.sources.map((s: { number: number; kind: string; value: string }) => [s.number, s.kind, s.value]),
    ).toEqual([
      [1, "observation", "190.50"],
      [2, "observation", "187.12"],
    ]);
    const again = await contextCall("GET", symbol, { suffix: "/input", token: tokens.ai });
    expect(again.body.input.input_id).toBe(input.input_id);

    // A document arrives: a new input, documents first; the old input keeps its numbers.
    const ctx = t.platform.contexts.get("trade") as TradeContext;
    const at = new Date("2026-12-03T08:00:00Z");
    const instrumentId = (await instrumentBySymbol(ctx.orm.em.fork(), symbol))!.id;
    await ctx.transaction((em) =>
      em.insert(DocumentRow, {
        id: newId("doc"),
        instrumentId,
        itemId: newId("itm"),
        sourceKey: "sec-edgar",
        canonicalUrl: "https://www.sec.gov/x",
        title: "Form 10-K",
        filingType: "10-K",
        publishedAt: at,
        revision: 1,
        receivedAt: at,
      }),
    );
    const changed = (await contextCall("GET", symbol, { suffix: "/input", token: tokens.ai })).body.input;
    expect(changed.input_id).not.toBe(input.input_id);
    expect(changed.sources.map((s: { kind: string; title: string }) => [s.kind, s.title])).toEqual([
      ["document", "Form 10-K"],
      ["observation", "price 190.50 USD"],
      ["observation", "price 187.12 USD"],
    ]);
    // Number 1 of the old input is still the 190.50 observation.
    const draft = await proposed(symbol, input.input_id);
    expect(draft.citations).toMatchObject([{ number: 1, kind: "observation", value: "190.50" }]);
  });

  it("answers 404 instrument.not_found for an unknown symbol and 400 for a malformed one", async () => {
    expect((await contextCall("GET", "NOSUCHSYM", { suffix: "/input" })).body).toMatchObject({
      status: 404,
      code: "instrument.not_found",
    });
    expect((await contextCall("GET", "NOSUCHSYM")).body).toMatchObject({ status: 404, code: "instrument.not_found" });
    expect((await contextCall("GET", "bad%20sym!")).body).toMatchObject({ status: 400, field: "symbol" });
  });
});

describe("the AI context gate", () => {
  it("stores AI output as a draft authored by the workflow run, never by the person named beside it", async () => {
    const { symbol, input } = await withInput();
    const asker = person();
    // The run of the AI service's stub provider, end to end: its id and stub flag are what is stored.
    const run = await runOf(symbol);
    expect(run.stub).toBe(true);
    const answer = await contextCall("POST", symbol, {
      token: tokens.ai,
      headers: { ...AI, ...as(asker) },
      body: aiDraft(input.input_id, run.runId),
    });
    expect(answer.status).toBe(201);
    const revision = answer.body.revision;
    expect(revision).toMatchObject({ revision: 1, status: "CONTEXT_STATUS_DRAFT", input_id: input.input_id });
    expect(revision.authorship).toEqual({
      ai: { workflow: WORKFLOW, run_id: run.runId, stub_provider: true, service: "svc:ai" },
    });
    expect(JSON.stringify(revision)).not.toContain(asker);
    expect(revision.disclosure).toContain(`run ${run.runId}`);
    expect(revision.disclosure).toContain("Awaiting review");
    expect(revision.approval).toBeUndefined();
    // Not published: the public read shows nothing yet.
    const read = await contextCall("GET", symbol, { token: tokens.ai });
    expect(read.body.context).toEqual({ symbol, drafts: [] });
  });

  it("refuses AI output without exactly the workflow or without a run id (422 context.workflow_required)", async () => {
    const { symbol, input } = await withInput();
    for (const extra of [
      { workflow: "" },
      { workflow: "trade.summarize" },
      { workflow: WORKFLOW.toUpperCase() },
      { run_id: "" },
    ]) {
      const answer = await contextCall("POST", symbol, {
        token: tokens.ai,
        headers: AI,
        body: await aiBody(input.input_id, extra),
      });
      expect(answer.body).toMatchObject({ status: 422, code: "context.workflow_required" });
    }
    // A person cannot label their text as AI output.
    const writer = person();
    const labelled = await contextCall("POST", symbol, { headers: as(writer), body: await aiBody(input.input_id) });
    expect(labelled.body).toMatchObject({ status: 400, field: "propose.workflow" });
  });

  it("verifies the run with the AI service: unknown, of another workflow or another service's is 422", async () => {
    const { symbol, input } = await withInput();
    const other = await t.token({ kind: "service", svc: "other", caps: ["ai.run.create"] });
    const runs = {
      unknown: "air_00000000000000000000000000",
      otherWorkflow: (await aiRun(t, { token: tokens.ai, workflow: "reviews.summarize_entity" })).runId,
      otherService: (await aiRun(t, { token: other, workflow: WORKFLOW })).runId,
    };
    const details = {
      unknown: `run ${runs.unknown} is unknown to the AI service`,
      otherWorkflow: "ran the workflow reviews.summarize_entity",
      otherService: "is not a run of svc:ai",
    };
    for (const [name, runId] of Object.entries(runs)) {
      const answer = await contextCall("POST", symbol, {
        token: tokens.ai,
        headers: AI,
        body: aiDraft(input.input_id, runId),
      });
      expect(answer.body, name).toMatchObject({ status: 422, code: "context.workflow_required" });
      expect(answer.body.detail).toContain(details[name as keyof typeof details]);
    }
    // Nothing was stored.
    const read = await contextCall("GET", symbol, { suffix: "?all=1" });
    expect(read.body.context.drafts).toEqual([]);
  });

  it("refuses citations that do not resolve against the input they cite (422 context.citation_invalid)", async () => {
    const { symbol, input } = await withInput();
    const other = await withInput();
    for (const extra of [
      { citations: [3] },
      { citations: [] },
      { citations: [1, 1] },
      { text: "Shares rose [2].", citations: [1] },
      { input_id: other.input.input_id },
      { input_id: "cin_nosuchinput" },
    ]) {
      const answer = await contextCall("POST", symbol, {
        token: tokens.ai,
        headers: AI,
        body: await aiBody(input.input_id, extra),
      });
      expect(answer.body, JSON.stringify(extra)).toMatchObject({ status: 422, code: "context.citation_invalid" });
    }
  });

  it("refuses text reading as a recommendation to trade, from AI and from a person alike", async () => {
    const { symbol, input } = await withInput();
    const text = "Momentum is strong; buy before the print [1].";
    const fromAi = await contextCall("POST", symbol, {
      token: tokens.ai,
      headers: AI,
      body: await aiBody(input.input_id, { text }),
    });
    expect(fromAi.body).toMatchObject({ status: 422, code: "context.recommendation_refused", phrase: "buy" });
    const writer = await t.token({ kind: "user", sub: person() });
    const fromPerson = await contextCall("POST", symbol, {
      token: writer,
      body: { propose: { text: "Our price target is 250 USD [1].", input_id: input.input_id, citations: [1] } },
    });
    expect(fromPerson.body).toMatchObject({
      status: 422,
      code: "context.recommendation_refused",
      phrase: "price target",
    });
    // A service writing as itself (authorship system) is refused the same way.
    const fromService = await contextCall("POST", symbol, {
      body: { propose: { text: "Strong buy at these levels [1].", input_id: input.input_id, citations: [1] } },
    });
    expect(fromService.body).toMatchObject({
      status: 422,
      code: "context.recommendation_refused",
      phrase: "Strong buy",
    });
    // A reported fact passes.
    const fact = await contextCall("POST", symbol, {
      token: writer,
      body: {
        propose: {
          text: "Analysts raised their price target after results [1].",
          input_id: input.input_id,
          citations: [1],
        },
      },
    });
    expect(fact.status).toBe(201);
    expect(fact.body.revision.authorship).toEqual({ person: expect.stringMatching(/^usr_/) });
  });
});
