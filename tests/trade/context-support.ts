import { beforeAll, expect } from "vitest";
import { aiRun } from "../support/ai-runs.js";
import type { TestPlatform } from "../support/platform.js";
import { ALL_TRADE, instrument, observationBody } from "./support.js";

export const WORKFLOW = "trade.summarize_market_context";
/** The header marking a call as AI output. */
export const AI = { "x-pf-origin": "ai" };
/** The header naming the person a service acts for. */
export const as = (subject: string) => ({ "x-pf-subject": subject });
const CONTEXT_CAPS = ["trade.context.read", "trade.context.propose"];

/** An AI proposal's body: the workflow and `runId` (a run of the AI service) unless overridden. */
export const aiDraft = (inputId: string, runId: string, extra: Record<string, unknown> = {}) => ({
  propose: {
    text: "Shares rose to 190.50 USD [1].",
    input_id: inputId,
    citations: [1],
    workflow: WORKFLOW,
    run_id: runId,
    ...extra,
  },
});

/** A decision's body (approve, reject, publish). */
export const decision = (action: string, revision: number, note?: string) => ({
  [action]: { revision, ...(note ? { note } : {}) },
});

/**
 * The callers and steps of the context tests: the web service (every trade
 * capability), the AI workflow's service, an operator holding trade.admin.
 */
export function contextKit(t: TestPlatform) {
  const tokens = { web: "", ai: "", admin: "" };
  beforeAll(async () => {
    tokens.web = await t.token({ kind: "service", svc: "web", caps: [...ALL_TRADE, ...CONTEXT_CAPS] });
    tokens.ai = await t.token({ kind: "service", svc: "ai", caps: [...CONTEXT_CAPS, "ai.run.create"] });
    tokens.admin = await t.token({ kind: "service", svc: "ops", caps: ["trade.admin"] });
  });

  /** A context route of an instrument, as `token` (the web service unless given). */
  const contextCall = (
    method: string,
    symbol: string,
    {
      token = tokens.web,
      suffix = "",
      body,
      headers = {},
    }: { token?: string; suffix?: string; body?: unknown; headers?: Record<string, string> } = {},
  ) => t.http(method, `/trade/api/v1/instruments/${symbol}/context${suffix}`, { token, body, headers });

  /** An instrument with two observations and its input; answers the symbol and the input. */
  const withInput = async () => {
    const { symbol } = await instrument(t, tokens.web);
    for (const [value, at] of [
      ["187.12", "2026-12-01T10:00:00Z"],
      ["190.50", "2026-12-02T10:00:00Z"],
    ]) {
      const recorded = await t.http("POST", "/trade/api/v1/observations", {
        token: tokens.web,
        body: observationBody(symbol, value, at),
      });
      expect(recorded.status).toBe(201);
    }
    const input = await contextCall("GET", symbol, { suffix: "/input", token: tokens.ai });
    expect(input.status).toBe(200);
    return { symbol, input: input.body.input };
  };

  /** A run of the workflow by the AI workflow's service, through the AI service's stub provider. */
  const runOf = (symbol = "ACME") => aiRun(t, { token: tokens.ai, workflow: WORKFLOW, variables: { symbol } });

  /** An AI proposal's body naming a fresh run of the workflow. */
  const aiBody = async (inputId: string, extra: Record<string, unknown> = {}) =>
    aiDraft(inputId, (await runOf()).runId, extra);

  /** An AI proposal (201); answers the draft revision. */
  const proposed = async (symbol: string, inputId: string, extra: Record<string, unknown> = {}) => {
    const body = await aiBody(inputId, extra);
    const answer = await contextCall("POST", symbol, { token: tokens.ai, headers: AI, body });
    expect(answer.status).toBe(201);
    return answer.body.revision;
  };

  return { tokens, contextCall, withInput, proposed, runOf, aiBody };
}
