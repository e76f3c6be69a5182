import { describe, expect, it } from "vitest";
import type { AiContext } from "../../services/ai/context.js";
import { insertRun, runById } from "../../services/ai/db/runs.js";
import { reapLostRuns } from "../../services/ai/workers/reaper.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";

const clock = new ManualClock(new Date("2027-04-02T08:00:00Z"));
const t = usePlatform({ services: ["ai"], clock, env: { PF_AI_LEASE_MS: "15000" } });
const ctx = () => t.platform.contexts.get("ai") as AiContext;

/** A run as an instance starts it: running, its lease `leaseMs` ahead of now. */
async function running(id: string, leaseMs: number): Promise<void> {
  const at = clock.now();
  const inserted = await ctx().transaction((em) =>
    insertRun(em, {
      id,
      operation: "summarize",
      workflow: "",
      workflowVersion: 0,
      namespace: "trade",
      caller: "svc:trade",
      request: { text: "A text." },
      cacheLookup: false,
      retryOf: null,
      leaseUntil: new Date(at.getTime() + leaseMs),
      at,
    }),
  );
  expect(inserted).toBe(true);
}

describe("the reaper", () => {
  it("fails a run whose instance was lost (its lease lapsed), with its event, and leaves a held run alone", async () => {
    await running("air_lost1", 15_000);
    await running("air_held1", 60_000);
    clock.advance(30_000);
    await reapLostRuns(ctx());

    const lost = (await runById(ctx().orm.em.fork(), "air_lost1"))!;
    expect(lost).toMatchObject({ state: "failed", failureCode: "ai.run_lost" });
    expect(lost.endedAt).toEqual(clock.now());
    expect((await runById(ctx().orm.em.fork(), "air_held1"))!.state).toBe("running");
    expect((await outboxEvents(t, "ai", "air_lost1")).map((event) => event.subject)).toEqual(["ai.run.failed"]);
    expect(await outboxEvents(t, "ai", "air_held1")).toEqual([]);

    // Its owner reads it failed through the route.
    const owner = await t.token({ kind: "service", sub: "svc:trade", caps: ["ai.run.create"] });
    const read = await t.http("GET", "/ai/api/v1/runs/air_lost1", { token: owner });
    expect(read.status).toBe(200);
    expect(read.body.run).toMatchObject({ state: "failed", failure: { code: "ai.run_lost" } });
  });
});
