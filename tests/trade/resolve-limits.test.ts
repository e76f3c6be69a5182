import { describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { usePlatform } from "../support/platform.js";
import { ALL_TRADE, TRADE_ENV } from "./support.js";

// Mid-minute and still: the test's calls all fall in one window.
const t = usePlatform({
  services: ["trade"],
  clock: new ManualClock(new Date(Math.floor(Date.now() / 60_000) * 60_000 + 30_000)),
  env: { ...TRADE_ENV, PF_TRADE_RESOLVES_PER_MINUTE: "3" },
});

describe("anonymous resolve limit", () => {
  it("an anonymous client gets its per-minute resolves, then 429 rate.limited with Retry-After; callers with a token are not counted", async () => {
    const path = "/trade/api/v1/instruments/resolve?q=NOSUCH";
    const web = await t.token({ kind: "service", svc: "web", caps: ALL_TRADE });
    for (let i = 0; i < 3; i++) expect((await t.http("GET", path)).status).toBe(200);
    const refused = await t.http("GET", path);
    expect(refused.body).toMatchObject({ status: 429, code: "rate.limited", rule: "trade.resolve.anonymous" });
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await t.http("GET", path, { token: web })).status).toBe(200);
    const person = await t.token({ kind: "user", sub: "usr_reader1" });
    expect((await t.http("GET", path, { token: person })).status).toBe(200);
  });
});
