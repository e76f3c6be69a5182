import { beforeAll, describe, expect, it } from "vitest";
import { getOption } from "@bufbuild/protobuf";
import { CouponsService } from "../../gen/pf/coupons/v1/coupons_pb.js";
import { rate_limits } from "../../gen/pf/v1/options_pb.js";
import { LIMITS } from "../../services/coupons/settings.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { usePlatform } from "../support/platform.js";
import { backend, eventsAbout, merchant, outboxPayloads, submitted } from "./support.js";

const clock = new ManualClock(new Date("2026-06-10T23:59:00Z"));
const t = usePlatform({ services: ["coupons"], clock });
let token: string;
let shopId: string;
beforeAll(async () => {
  token = await backend(t);
  shopId = (await merchant(t, token)).id;
});

const DAY = 86_400_000;
/** Anonymous lookups a client address makes a minute: the default coupons.proto declares. */
const ANONYMOUS_LOOKUPS = getOption(CouponsService, rate_limits).find((limit) => limit.name === "lookup")!.anonymous!
  .perMinute;
const report = (id: string, person: string, outcome: "WORKED" | "FAILED", headers: Record<string, string> = {}) =>
  t.http("POST", `/coupons/api/v1/coupons/${id}/report`, {
    token,
    headers: { "x-pf-subject": person, ...headers },
    body: { outcome: `REPORT_OUTCOME_${outcome}` },
  });
let submitters = 0;
// Each code from another submitter: submissions have their own per-person limit.
const code = async () => (await submitted(t, token, shopId, {}, `usr_submitter${submitters++}`)).coupon.id as string;

/** The aggregates the one accepted report of a race leaves. */
const countOf = (answers: { status: number; body: { coupon?: { reports: { worked: number; failed: number } } } }[]) => {
  const { worked, failed } = answers.find((a) => a.status === 201)!.body.coupon!.reports;
  expect(worked + failed).toBe(1);
  return { worked, failed };
};

describe("reporting a code", () => {
  it("answers 201 with the aggregates only, never a reporter, and publishes coupons.code.reported without one", async () => {
    const id = await code();
    const answer = await report(id, "usr_alice1", "WORKED");
    expect(answer.status).toBe(201);
    expect(answer.body).toEqual({
      day: "2026-06-10",
      coupon: expect.objectContaining({
        id,
        status: "COUPON_STATUS_REPORTED_WORKING",
        confidence: 0.667,
        reports: { worked: 1, failed: 0, last_worked_at: clock.now().toISOString().replace(".000Z", "Z") },
      }),
    });
    expect(JSON.stringify(answer.body)).not.toContain("usr_alice1");
    expect((await t.http("GET", `/coupons/api/v1/coupons/${id}`)).body.coupon.reports.worked).toBe(1);
    expect(await eventsAbout(t, id)).toEqual([
      "coupons.code.submitted",
      "coupons.code.published",
      "coupons.code.reported",
      "coupons.code.status_changed",
    ]);
    expect((await outboxPayloads(t)).join("\n")).not.toContain("usr_alice1");
  });

  it("takes one report per person, code and UTC day, across the day boundary of the injected clock; only the latest counts", async () => {
    clock.set(new Date("2026-06-11T23:58:00Z"));
    const id = await code();
    expect((await report(id, "usr_bob1", "WORKED")).status).toBe(201);
    clock.set(new Date("2026-06-11T23:59:59Z"));
    const again = await report(id, "usr_bob1", "FAILED");
    expect(again.body).toMatchObject({ status: 409, code: "coupons.report.duplicate", day: "2026-06-11" });
    // Another person the same day, and the same person on another code, are fine.
    expect((await report(id, "usr_carol1", "WORKED")).status).toBe(201);
    const other = await code();
    const elsewhere = await report(other, "usr_bob1", "FAILED");
    expect(elsewhere.status).toBe(201);
    expect(elsewhere.body).toMatchObject({
      day: "2026-06-11",
      coupon: { id: other, reports: { worked: 0, failed: 1 } },
    });
    clock.set(new Date("2026-06-12T00:00:01Z"));
    const nextDay = await report(id, "usr_bob1", "FAILED");
    expect(nextDay.status).toBe(201);
    // Bob's earlier "worked" no longer counts; Carol's, a day older than Bob's "failed", weighs a little less.
    expect(nextDay.body).toMatchObject({
      day: "2026-06-12",
      coupon: { reports: { worked: 1, failed: 1 }, status: "COUPON_STATUS_UNKNOWN", confidence: 0.494 },
    });
    expect((await report(id, "usr_bob1", "WORKED")).status).toBe(409);
  });

  it("two reports by one person on one code at once: one 201, the other 409 coupons.report.duplicate, never 500", async () => {
    clock.set(new Date("2026-06-15T12:00:00Z"));
    const id = await code();
    const answers = await Promise.all([report(id, "usr_twin1", "WORKED"), report(id, "usr_twin1", "FAILED")]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    expect(answers.find((a) => a.status === 409)!.body).toMatchObject({
      code: "coupons.report.duplicate",
      day: "2026-06-15",
    });
    expect((await t.http("GET", `/coupons/api/v1/coupons/${id}`)).body.coupon.reports).toMatchObject(countOf(answers));
  });

  it("confidence and the reported_* statuses follow from reports and time", async () => {
    clock.set(new Date("2026-06-20T12:00:00Z"));
    const id = await code();
    await report(id, "usr_dan1", "FAILED");
    await report(id, "usr_erin1", "FAILED");
    const read = async () => (await t.http("GET", `/coupons/api/v1/coupons/${id}`)).body.coupon;
    expect(await read()).toMatchObject({ status: "COUPON_STATUS_REPORTED_FAILED", confidence: 0.25 });
    clock.advance(14 * DAY);
    expect(await read()).toMatchObject({ status: "COUPON_STATUS_REPORTED_FAILED", confidence: 0.333 });
    clock.advance(28 * DAY);
    expect(await read()).toMatchObject({ status: "COUPON_STATUS_UNKNOWN", reports: { failed: 2 } });
  });

  it("refuses AI output, guests, callers acting for nobody, a missing outcome, hidden and expired codes", async () => {
    const id = await code();
    expect((await report(id, "usr_f1", "WORKED", { "x-pf-origin": "ai" })).body).toMatchObject({
      status: 403,
      code: "coupons.report.ai_refused",
    });
    expect((await report(id, "gst_f1", "WORKED")).body).toMatchObject({ status: 403, code: "auth.member_required" });
    const nobody = await t.http("POST", `/coupons/api/v1/coupons/${id}/report`, {
      token,
      body: { outcome: "REPORT_OUTCOME_WORKED" },
    });
    expect(nobody.body).toMatchObject({ status: 403, code: "auth.member_required" });
    const none = await t.http("POST", `/coupons/api/v1/coupons/${id}/report`, {
      token,
      headers: { "x-pf-subject": "usr_f1" },
      body: {},
    });
    expect(none.body).toMatchObject({ status: 400, field: "outcome" });
    expect((await report("cpn_none", "usr_f1", "WORKED")).body).toMatchObject({
      status: 404,
      code: "coupons.code.not_found",
    });
    const expiring = (
      await submitted(t, token, shopId, { expires_at: new Date(clock.now().getTime() + 1000).toISOString() })
    ).coupon.id;
    clock.advance(1000);
    expect((await report(expiring, "usr_f1", "WORKED")).body).toMatchObject({
      status: 409,
      code: "coupons.code.expired",
    });
  });
});

describe("rate limits", () => {
  it(`reports: ${LIMITS.reportsPerHour} per person per hour (429 rate.limited)`, async () => {
    clock.set(new Date("2026-09-01T00:00:00Z"));
    const ids: string[] = [];
    for (let i = 0; i <= LIMITS.reportsPerHour; i++) ids.push(await code());
    for (const id of ids.slice(0, -1)) expect((await report(id, "usr_busy1", "WORKED")).status).toBe(201);
    const over = await report(ids[ids.length - 1], "usr_busy1", "WORKED");
    expect(over.body).toMatchObject({ status: 429, code: "rate.limited" });
    expect((await report(ids[ids.length - 1], "usr_calm1", "WORKED")).status).toBe(201);
    clock.advance(3_600_000);
    expect((await report(ids[ids.length - 1], "usr_busy1", "WORKED")).status).toBe(201);
  });

  it(`submissions: ${LIMITS.submitsPerHour} per person per hour (429 rate.limited)`, async () => {
    clock.set(new Date("2026-09-01T06:00:00Z"));
    for (let i = 0; i < LIMITS.submitsPerHour; i++) await submitted(t, token, shopId, {}, "usr_prolific1");
    const over = await t.http("POST", "/coupons/api/v1/coupons/submit", {
      token,
      headers: { "x-pf-subject": "usr_prolific1" },
      body: { merchant_id: shopId, code: "ONEMORE" },
    });
    expect(over.body).toMatchObject({ status: 429, code: "rate.limited", rule: "coupons.submit.submitter" });
  });

  it(`lookups: anonymous callers ${ANONYMOUS_LOOKUPS} a minute per address, tighter than callers with a token`, async () => {
    clock.set(new Date("2026-09-02T00:00:00Z"));
    const path = `/coupons/api/v1/merchants/${shopId}`;
    const answers = await Promise.all(Array.from({ length: ANONYMOUS_LOOKUPS + 1 }, () => t.http("GET", path)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(ANONYMOUS_LOOKUPS);
    expect(answers.find((a) => a.status !== 200)?.body).toMatchObject({ status: 429, code: "rate.limited" });
    const user = await t.token({ kind: "user", sub: "usr_reader1" });
    expect((await t.http("GET", path, { token: user })).status).toBe(200);
    clock.advance(60_000);
    expect((await t.http("GET", path)).status).toBe(200);
  });
});
