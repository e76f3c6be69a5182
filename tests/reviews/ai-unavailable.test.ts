import { beforeAll, describe, expect, it } from "vitest";
import { useBeside } from "../support/beside.js";
import { aiRun } from "../support/ai-runs.js";
import { ALL_REVIEWS, fresh, REVIEWS_ENV } from "./support.js";

// The AI service in a platform of its own, reached over gRPC through a proxy the test cuts: a summary proposal's run
// is verified across processes, and while the AI service does not answer the proposal is refused (never a yes).
const split = useBeside("reviews", { callees: ["ai"], env: REVIEWS_ENV });
const EDITOR = "usr_editor1";
let web = "";
let ai = "";
beforeAll(async () => {
  web = await split.service.token({ kind: "service", svc: "web", caps: ALL_REVIEWS });
  ai = await split.service.token({ kind: "service", svc: "ai", caps: ALL_REVIEWS });
});

/** An entity with one rating, and a proposal body citing it naming `runId`. */
async function proposal(runId: string) {
  const reviews = (method: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
    split.service.http(method, `/reviews/api/v1${path}`, { token: web, body, headers });
  const entity = (await reviews("POST", "/entities", { name: fresh("Entity ") }, { "x-pf-subject": EDITOR })).body
    .entity;
  const signal = (
    await reviews("POST", `/entities/${entity.id}/signals`, {
      kind: "rating",
      score: 4,
      scale: 5,
      source_key: "shop",
      source_ref: fresh("r"),
    })
  ).body.signal;
  const body = {
    overview: "Overview",
    pros: [{ text: "Sturdy", citations: [signal.id] }],
    workflow: "reviews.summarize_entity",
    run_id: runId,
  };
  return () =>
    split.service.http("POST", `/reviews/api/v1/entities/${entity.id}/summary/proposals`, {
      token: ai,
      body,
      headers: { "x-pf-origin": "ai" },
    });
}

describe("the AI service in another process", () => {
  it("verifies a run over gRPC; unreachable, the proposal is 503 dependency.unavailable and stores nothing", async () => {
    const runner = await split.callees.token({ kind: "service", svc: "ai", caps: ["ai.run.create"] });
    const { runId } = await aiRun(split.callees, { token: runner, workflow: "reviews.summarize_entity" });
    const propose = await proposal(runId);
    await split.reachable(["ai"], false);
    try {
      const refused = await propose();
      expect(refused.body).toMatchObject({ status: 503, code: "dependency.unavailable" });
    } finally {
      await split.reachable(["ai"], true);
    }
    const taken = await propose();
    expect(taken.status, JSON.stringify(taken.body)).toBe(201);
    // The refused attempt stored nothing: this is the first revision.
    expect(taken.body.revision).toMatchObject({
      revision: 1,
      authorship: { ai: { workflow: "reviews.summarize_entity", run_id: runId, stub_provider: true } },
    });
  });
});
