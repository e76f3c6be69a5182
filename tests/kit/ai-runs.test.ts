import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { type Run, RunCreateResultSchema, RunSchema } from "../../gen/pf/ai/v1/runs_pb.js";
import { type AiRuns, verifiedAuthor } from "../../services/kit/auth/ai-runs.js";
import type { AiRule, Author } from "../../services/kit/auth/authorship.js";
import { problem, problemOf } from "../../services/kit/handler/problem.js";

/** The run check every service recording AI output makes (kit/auth/ai-runs.ts), against a stand-in AI service. */
const RULE: AiRule = { workflow: "trade.summarize_market_context", code: "context.workflow_required" };
const RUN_ID = "air_01jd0000000000000000000000";
const author: Extract<Author, { kind: "ai" }> = {
  kind: "ai",
  workflow: RULE.workflow,
  runId: RUN_ID,
  stubProvider: false,
  service: "svc:trade",
};
const run = (fields: MessageInitShape<typeof RunSchema> = {}) =>
  create(RunSchema, {
    id: RUN_ID,
    operation: "workflow",
    workflow: RULE.workflow,
    caller: "svc:trade",
    state: "succeeded",
    stub: true,
    ...fields,
  });

/** An AI service answering `answer` (a run, or the error it throws), counting the reads. */
function aiAnswering(answer: Run | Error): AiRuns & { reads: number } {
  const fake = {
    reads: 0,
    getRun: async () => {
      fake.reads++;
      if (answer instanceof Error) throw answer;
      return create(RunCreateResultSchema, { run: answer });
    },
  };
  return fake as unknown as AiRuns & { reads: number };
}

const refusal = (ai: AiRuns, who: Author = author) =>
  verifiedAuthor(ai, who, RULE).then(
    () => undefined,
    (error: unknown) => problemOf(error),
  );

describe("verifiedAuthor", () => {
  it("takes a succeeded run of the workflow by the sender, the stub flag from the run", async () => {
    expect(await verifiedAuthor(aiAnswering(run()), author, RULE)).toEqual({ ...author, stubProvider: true });
    // The person a service acts for owns runs it asked for on their behalf.
    const forPerson = { ...author, requestedBy: "usr_01" };
    expect(await verifiedAuthor(aiAnswering(run({ caller: "usr_01", stub: false })), forPerson, RULE)).toEqual(
      forPerson,
    );
  });

  it("passes people and services writing as themselves without asking the AI service", async () => {
    const ai = aiAnswering(new Error("never asked"));
    const person: Author = { kind: "person", person: "usr_01" };
    expect(await verifiedAuthor(ai, person, RULE)).toBe(person);
    expect(ai.reads).toBe(0);
  });

  it("refuses with the route's 422 what the AI service does not vouch for", async () => {
    const notFound = problem(404, "ai.run.not_found", "No run.");
    const cases: [string, AiRuns, Author, string][] = [
      ["unknown", aiAnswering(notFound), author, `run ${RUN_ID} is unknown to the AI service`],
      ["not its id", aiAnswering(run()), { ...author, runId: "run_01" }, "run run_01 is unknown to the AI service"],
      ["another workflow", aiAnswering(run({ workflow: "news.draft_story" })), author, "news.draft_story"],
      ["failed", aiAnswering(run({ state: "failed" })), author, "is failed"],
      ["running", aiAnswering(run({ state: "running" })), author, "is running"],
      ["another caller", aiAnswering(run({ caller: "svc:news" })), author, "is not a run of svc:trade"],
      ["stub claimed", aiAnswering(run({ stub: false })), { ...author, stubProvider: true }, "not the stub provider"],
    ];
    for (const [name, ai, who, detail] of cases) {
      const found = await refusal(ai, who);
      expect(found, name).toMatchObject({ status: 422, code: RULE.code });
      expect(found?.detail, name).toContain(detail);
    }
  });

  it("never says yes when the AI service does not answer: 503 dependency.unavailable", async () => {
    for (const error of [
      new ConnectError("connect ECONNREFUSED", Code.Unavailable),
      new ConnectError("deadline", Code.DeadlineExceeded),
      problem(403, "auth.capability_missing", "no ai.run.read"),
      problem(500, "internal", "boom"),
    ])
      expect(await refusal(aiAnswering(error)), error.message).toMatchObject({
        status: 503,
        code: "dependency.unavailable",
      });
  });
});
