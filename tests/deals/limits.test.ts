import { beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { usePlatform } from "../support/platform.js";
import { actingFor, ALL_DEALS, person, submit } from "./support.js";

const WATCHES = 3;

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
    PF_DEALS_OBSERVATIONS_PER_HOUR: "2",
    PF_DEALS_WATCHES_PER_PERSON: String(WATCHES),
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

describe("observations per person (429 rate.limited)", () => {
  it("updates record at most the limit an hour per person; an idempotent retry counts once", async () => {
    const offer = (await submit(t, web, person())).offer;
    const who = person();
    const observe = (key?: string) =>
      as(
        "POST",
        `/offers/${offer.id}/observations`,
        who,
        { observation: { availability: "AVAILABILITY_IN_STOCK" } },
        key ? { "idempotency-key": key } : {},
      );
    expect((await observe("obs-1")).status).toBe(201);
    expect((await observe("obs-1")).status).toBe(201);
    expect(
      (await as("PATCH", `/offers/${offer.id}`, who, { observation: { condition: "CONDITION_NEW" } })).status,
    ).toBe(200);
    const refused = await observe();
    expect(refused.body).toMatchObject({ status: 429, code: "rate.limited", rule: "deals.observation.person" });
    expect(
      (await as("POST", `/offers/${offer.id}/observations`, person(), { observation: { condition: "CONDITION_NEW" } }))
        .status,
    ).toBe(201);
  });
});

describe("watches per person (409 watch.limit)", () => {
  const keyword = (word: string) => ({ kind: "WATCH_KIND_KEYWORD", keyword: word });

  it("are capped, saved searches included; deleting one makes room", async () => {
    const who = person();
    const ids: string[] = [];
    for (let i = 0; i < WATCHES - 1; i++)
      ids.push((await as("POST", "/watches", who, keyword(`lego${i}`))).body.watch.id);
    const saved = await as("POST", "/watches", who, { kind: "WATCH_KIND_SAVED_SEARCH", query: "lego" });
    expect(saved.status).toBe(201);
    const refused = await as("POST", "/watches", who, keyword("duplo"));
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "watch.limit", limit: WATCHES });
    expect(refused.body.detail).toContain("delete one");

    expect((await as("DELETE", `/watches/${ids[0]}`, who)).status).toBe(200);
    expect((await as("POST", "/watches", who, keyword("duplo"))).status).toBe(201);
    expect((await as("POST", "/watches", who, keyword("technic"))).body.code).toBe("watch.limit");
    // Counted per person.
    expect((await as("POST", "/watches", person(), keyword("duplo"))).status).toBe(201);
  });

  it("hold under concurrency: parallel creates with one place left make exactly one watch", async () => {
    const who = person();
    for (let i = 0; i < WATCHES - 1; i++)
      expect((await as("POST", "/watches", who, keyword(`lego${i}`))).status).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => as("POST", "/watches", who, keyword(`brick${i}`))),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    expect((await as("GET", "/watches", who)).body.watches.watches).toHaveLength(WATCHES);
  });
});
