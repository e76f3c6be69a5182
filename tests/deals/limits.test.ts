import { beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { usePlatform } from "../support/platform.js";
import { actingFor, ALL_DEALS, person, submit } from "./support.js";

// Tight limits so each rule is reached in a few calls; the clock stands still in the middle of a minute, so no
// window boundary falls between the calls of a test on a slow machine.
const t = usePlatform({
  services: ["deals"],
  clock: new ManualClock(new Date(Math.floor(Date.now() / 60_000) * 60_000 + 30_000)),
  env: {
    PF_DEALS_SUBMITS_PER_HOUR: "2",
    PF_DEALS_VOTES_PER_PERSON_MINUTE: "2",
    PF_DEALS_VOTES_PER_OFFER_MINUTE: "3",
    PF_DEALS_FLAGS_PER_HOUR: "1",
  },
});
let web: string;
let as: ReturnType<typeof actingFor>;

beforeAll(async () => {
  web = await t.token({ kind: "service", svc: "web", caps: ALL_DEALS });
  as = actingFor(t, () => web);
});

describe("rate limits (429 rate.limited)", () => {
  it("submits per person", async () => {
    const who = person();
    await submit(t, web, who);
    await submit(t, web, who);
    const third = await as("POST", "/offers", who, { link: "https://x.example/limit", title: "T" });
    expect(third.body).toMatchObject({ status: 429, code: "rate.limited" });
    await submit(t, web, person());
  });

  it("votes per person and per offer", async () => {
    const [a, b] = [(await submit(t, web, person())).offer, (await submit(t, web, person())).offer];
    const voter = person();
    expect((await as("PUT", `/offers/${a.id}/vote`, voter, { value: 1 })).status).toBe(200);
    expect((await as("PUT", `/offers/${b.id}/vote`, voter, { value: 1 })).status).toBe(200);
    expect((await as("PUT", `/offers/${a.id}/vote`, voter, { value: -1 })).body.code).toBe("rate.limited");
    expect((await as("PUT", `/offers/${a.id}/vote`, person(), { value: 1 })).status).toBe(200);
    expect((await as("PUT", `/offers/${a.id}/vote`, person(), { value: 1 })).status).toBe(200);
    expect((await as("PUT", `/offers/${a.id}/vote`, person(), { value: 1 })).body.code).toBe("rate.limited");
  });

  it("flags per person", async () => {
    const [a, b] = [(await submit(t, web, person())).offer, (await submit(t, web, person())).offer];
    const reporter = person();
    expect((await as("POST", `/offers/${a.id}/flags`, reporter, { reason: "FLAG_REASON_SPAM" })).status).toBe(201);
    expect((await as("POST", `/offers/${b.id}/flags`, reporter, { reason: "FLAG_REASON_SPAM" })).body.code).toBe(
      "rate.limited",
    );
  });
});
