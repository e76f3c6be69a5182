import { describe, expect, it } from "vitest";
import type { AiContext } from "../../services/ai/context.js";
import { admitCall, recordCallOutcome, resetBreaker } from "../../services/ai/db/breakers.js";
import { admit, afterOutcome, type Breaker } from "../../services/ai/domain/breaker.js";
import { sql } from "../../services/kit/db/sql.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";

const clock = new ManualClock(new Date("2027-04-01T10:00:00Z"));
const t = usePlatform({ services: ["ai"], clock });
const ctx = () => t.platform.contexts.get("ai") as AiContext;

describe("the breaker as a state machine", () => {
  const now = new Date("2027-01-01T00:00:00Z");
  const later = (ms: number) => new Date(now.getTime() + ms);
  const start: Breaker = {
    state: "closed",
    failures: 0,
    threshold: 3,
    openMs: 1_000,
    openedAt: null,
    reopensAt: null,
    trialUntil: null,
  };

  it("lets calls pass while closed and opens after threshold failures in a row; a success in between starts over", () => {
    expect(admit(start, now, 500)).toEqual({ admission: "pass" });
    let breaker = afterOutcome(start, "failure", now).next;
    breaker = afterOutcome(breaker, "failure", now).next;
    expect(breaker).toMatchObject({ state: "closed", failures: 2 });
    expect(afterOutcome(breaker, "success", now).next).toMatchObject({ state: "closed", failures: 0 });
    const third = afterOutcome(breaker, "failure", now);
    expect(third.opened).toBe(true);
    expect(third.next).toMatchObject({ state: "open", failures: 3, openedAt: now, reopensAt: later(1_000) });
  });

  it("refuses while open, gives one trial once due, refuses others while it runs, and a lapsed trial is taken again", () => {
    const open = afterOutcome({ ...start, failures: 2 }, "failure", now).next;
    expect(admit(open, later(999), 500).admission).toBe("refused");
    const trial = admit(open, later(1_000), 500);
    expect(trial.admission).toBe("trial");
    expect(trial.next).toMatchObject({ state: "half_open", trialUntil: later(1_500) });
    expect(admit(trial.next!, later(1_499), 500).admission).toBe("refused");
    expect(admit(trial.next!, later(1_500), 500)).toMatchObject({
      admission: "trial",
      next: { trialUntil: later(2_000) },
    });
  });

  it("closes on the trial's success and opens again on its failure; a late failure while open opens nothing", () => {
    const halfOpen: Breaker = { ...start, state: "half_open", failures: 3, trialUntil: later(500) };
    expect(afterOutcome(halfOpen, "success", now).next).toMatchObject({ state: "closed", failures: 0 });
    const failed = afterOutcome(halfOpen, "failure", later(100));
    expect(failed.opened).toBe(true);
    expect(failed.next).toMatchObject({ state: "open", reopensAt: later(1_100), trialUntil: null });
    const late = afterOutcome(failed.next, "failure", later(200));
    expect(late.opened).toBe(false);
    expect(late.next).toMatchObject({ state: "open", failures: 5, reopensAt: later(1_100) });
  });
});

describe("the breaker shared in PostgreSQL", () => {
  const provider = "flaky";
  const breakerRow = async () => {
    const [row] = await sql<{ breaker_state: string; breaker_failures: number; breaker_trial_until: Date | null }>(
      ctx().orm.em.fork(),
      `select breaker_state, breaker_failures, breaker_trial_until from {providers} where key = ?`,
      [provider],
    );
    return row;
  };

  it("opens at the threshold, recording ai.provider.breaker_opened, and refuses until it is due", async () => {
    const at = clock.now();
    await sql(
      ctx().orm.em.fork(),
      `insert into {providers} (key, kind, base_url, timeout_ms, breaker_threshold, breaker_open_ms, created_at, updated_at)
       values (?, 'openai', 'https://api.openai.com/v1', 500, 2, 1000, ?, ?)`,
      [provider, at, at],
    );
    expect(await admitCall(ctx(), provider)).toBe("pass");
    await recordCallOutcome(ctx(), provider, "failure");
    expect(await breakerRow()).toMatchObject({ breaker_state: "closed", breaker_failures: 1 });
    await recordCallOutcome(ctx(), provider, "failure");
    expect(await breakerRow()).toMatchObject({ breaker_state: "open", breaker_failures: 2 });
    const events = await outboxEvents(t, "ai", provider);
    expect(events.map((event) => event.subject)).toEqual(["ai.provider.breaker_opened"]);
    expect(await admitCall(ctx(), provider)).toBe("refused");
    clock.advance(999);
    expect(await admitCall(ctx(), provider)).toBe("refused");
  });

  it("grants exactly one trial of many concurrent callers once due; its failure opens it again", async () => {
    clock.advance(1);
    const answers = await Promise.all(Array.from({ length: 12 }, () => admitCall(ctx(), provider)));
    expect(answers.filter((answer) => answer === "trial")).toHaveLength(1);
    expect(answers.filter((answer) => answer === "refused")).toHaveLength(11);
    expect((await breakerRow()).breaker_state).toBe("half_open");
    await recordCallOutcome(ctx(), provider, "failure");
    expect((await breakerRow()).breaker_state).toBe("open");
    expect(await outboxEvents(t, "ai", provider)).toHaveLength(2);
    expect(await admitCall(ctx(), provider)).toBe("refused");
  });

  it("gives a new trial when the last one's holder never answered, and closes on a trial's success", async () => {
    clock.advance(1_000);
    expect(await admitCall(ctx(), provider)).toBe("trial");
    clock.advance(499);
    expect(await admitCall(ctx(), provider)).toBe("refused");
    clock.advance(1);
    const answers = await Promise.all(Array.from({ length: 6 }, () => admitCall(ctx(), provider)));
    expect(answers.sort()).toEqual(["refused", "refused", "refused", "refused", "refused", "trial"]);
    await recordCallOutcome(ctx(), provider, "success");
    expect(await breakerRow()).toMatchObject({
      breaker_state: "closed",
      breaker_failures: 0,
      breaker_trial_until: null,
    });
    expect(await admitCall(ctx(), provider)).toBe("pass");
  });

  it("is closed with no failures by a reset, and an unknown provider is refused", async () => {
    await recordCallOutcome(ctx(), provider, "failure");
    await recordCallOutcome(ctx(), provider, "failure");
    expect((await breakerRow()).breaker_state).toBe("open");
    await ctx().transaction((em) => resetBreaker(em, provider));
    expect(await breakerRow()).toMatchObject({ breaker_state: "closed", breaker_failures: 0 });
    expect(await admitCall(ctx(), provider)).toBe("pass");
    expect(await admitCall(ctx(), "nobody")).toBe("refused");
  });
});
