import { afterEach, describe, expect, it, vi } from "vitest";
import { OverlayHub } from "../../services/tips/live/hub.js";
import { usePlatform } from "../support/platform.js";
import { openEventStream } from "../support/sse.js";
import { createGoal, creatorId, mintOverlayToken, recordExternalTip, streamUrl } from "./overlay-support.js";

/** What one creator's overlay stream never shows of another creator, and what a closed stream leaves behind. */
const t = usePlatform({ services: ["tips"] });

afterEach(() => {
  vi.restoreAllMocks();
});

describe("an overlay stream", () => {
  it("never shows another creator's goal, even when its config names that goal's id", async () => {
    const owner = creatorId();
    const ownerToken = await t.token({ kind: "user", sub: owner });
    const secretGoal = await t.http("POST", "/tips/api/v1/goals", {
      token: ownerToken,
      body: { title: "Private plans", target: { minor_units: "5000", currency: "USD" }, public: false },
    });
    expect(secretGoal.status).toBe(201);
    const goalId = secretGoal.body.goal.id;
    // The goal view (overlay_goals) hears of the goal once a contribution is recorded.
    await recordExternalTip(t, owner, { minor: 1234, goalId });
    await vi.waitFor(
      async () => {
        const em = t.platform.contexts.get("tips")!.orm.em.fork();
        const rows = await em
          .getConnection()
          .execute<{ goal_id: string }[]>(`select goal_id from tips.overlay_goals where goal_id = ?`, [goalId]);
        expect(rows).toHaveLength(1);
      },
      { timeout: 10_000, interval: 100 },
    );

    const snoop = creatorId();
    const snoopToken = await t.token({ kind: "user", sub: snoop });
    const refused = await t.http("POST", "/tips/api/v1/overlay-configs", {
      token: snoopToken,
      body: { kind: "OVERLAY_KIND_GOALS", name: "Theirs", goals: { goal_id: goalId } },
    });
    expect(refused.body).toMatchObject({ status: 404, code: "goal.not_found" });
    // The write refuses it; the stream holds anyway for a config that names one (written before that check, or by hand).
    const config = await t.http("POST", "/tips/api/v1/overlay-configs", {
      token: snoopToken,
      body: { kind: "OVERLAY_KIND_GOALS", name: "Theirs", goals: { goal_id: await createGoal(t, snoop) } },
    });
    expect(config.status).toBe(201);
    const em = t.platform.contexts.get("tips")!.orm.em.fork();
    await em
      .getConnection()
      .execute(
        `update tips.overlay_configs set settings = jsonb_set(settings, '{goal_id}', to_jsonb(?::text)) where id = ?`,
        [goalId, config.body.config.id],
      );
    const named = await t.http("GET", `/tips/api/v1/overlay-configs/${config.body.config.id}`, { token: snoopToken });
    expect(named.body.config.goals.goal_id).toBe(goalId);
    const { secret } = await mintOverlayToken(t, snoop, ["OVERLAY_SCOPE_GOALS"]);
    const answer = await openEventStream(streamUrl(t, secret));
    const stream = answer.stream!;
    expect(await stream.next()).toMatchObject({ event: "opened" });
    expect(await stream.next()).toMatchObject({ event: "config", data: { config: { id: config.body.config.id } } });
    await expect(stream.next(700)).rejects.toThrow("no event");
    await stream.close();
  });

  it("stops listening to the live feed when its client goes away", async () => {
    const stops: { creator: string; stopped: boolean }[] = [];
    const listen = OverlayHub.prototype.listen;
    vi.spyOn(OverlayHub.prototype, "listen").mockImplementation(function (this: OverlayHub, creator, listener) {
      const entry = { creator, stopped: false };
      stops.push(entry);
      const stop = listen.call(this, creator, listener);
      return () => {
        entry.stopped = true;
        stop();
      };
    });
    const creator = creatorId();
    const { secret } = await mintOverlayToken(t, creator, ["OVERLAY_SCOPE_ALERTS"]);
    const stream = (await openEventStream(streamUrl(t, secret))).stream!;
    expect(await stream.next()).toMatchObject({ event: "opened" });
    expect(stops.filter((entry) => entry.creator === creator)).toEqual([{ creator, stopped: false }]);
    await stream.close();
    await vi.waitFor(
      () => expect(stops.filter((entry) => entry.creator === creator)).toEqual([{ creator, stopped: true }]),
      { timeout: 5_000, interval: 50 },
    );
  });
});

describe("an overlay stream whose token's revocation event never reached it", () => {
  const quick = usePlatform({ services: ["tips"], env: { PF_TIPS_OVERLAY_RECHECK_MS: "300" } });

  it("ends within the re-check period (PF_TIPS_OVERLAY_RECHECK_MS) with 401 overlay_token.revoked", async () => {
    const creator = creatorId();
    const { id, secret } = await mintOverlayToken(quick, creator, ["OVERLAY_SCOPE_ALERTS"]);
    const stream = (await openEventStream(streamUrl(quick, secret))).stream!;
    expect(await stream.next()).toMatchObject({ event: "opened" });
    // Revoked behind the stream's back: no tips.overlay_token.revoked is published.
    const em = quick.platform.contexts.get("tips")!.orm.em.fork();
    await em.getConnection().execute(`update tips.overlay_tokens set revoked_at = now() where id = ?`, [id]);
    expect(await stream.next(3000)).toMatchObject({
      event: "error",
      data: { status: 401, code: "overlay_token.revoked" },
    });
    await stream.end(3000);
  });
});
