import { expect } from "vitest";
import type { TestPlatform } from "./platform.js";

/** A document a run cites, as POST /ai/api/v1/runs takes it. */
export interface RunDocument {
  id: string;
  text: string;
  url?: string;
  title?: string;
}

/** What a run produced: its id (to name as AI output), its text and whether the stub provider answered. */
export interface AiRun {
  runId: string;
  text: string;
  stub: boolean;
}

/**
 * Values for the placeholders of every seeded workflow's prompt (trade's symbol, reviews' entity, news' and blog's
 * topic, community's text), so a test names only the workflow; its own variables win.
 */
const SEEDED_VARIABLES = { symbol: "ACME", entity: "the product", topic: "the news", text: "A text to answer." };

/**
 * Runs `workflow` on the platform under test (it must run the `ai` service) through POST /ai/api/v1/runs with
 * `token` (a service holding ai.run.create), on the seeded local stub provider, and answers the succeeded run.
 */
export async function aiRun(
  t: TestPlatform,
  options: { token: string; workflow: string; variables?: Record<string, unknown>; documents?: RunDocument[] },
): Promise<AiRun> {
  const answer = await t.http("POST", "/ai/api/v1/runs", {
    token: options.token,
    body: {
      workflow: options.workflow,
      variables: { ...SEEDED_VARIABLES, ...options.variables },
      documents: options.documents ?? [],
    },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  const { run } = answer.body;
  expect(run.state).toBe("succeeded");
  return { runId: run.id, text: run.output?.text ?? "", stub: run.stub === true };
}
