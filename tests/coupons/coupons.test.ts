import { beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { usePlatform } from "../support/platform.js";
import { backend, eventsAbout, merchant, staff, submitted, unique } from "./support.js";

const clock = new ManualClock(new Date("2026-04-01T10:00:00Z"));
const t = usePlatform({ services: ["coupons"], clock });
let token: string;
beforeAll(async () => {
  token = await backend(t);
});

const submit = (body: Record<string, unknown>, headers: Record<string, string> = { "x-pf-subject": "usr_sub1" }) =>
  t.http("POST", "/coupons/api/v1/coupons/submit", { token, headers, body: { code: unique("C"), ...body } });
const lookup = (id: string) => t.http("GET", `/coupons/api/v1/coupons/${id}`);
const active = async (merchantId: string) => {
  const answer = await t.http("GET", `/coupons/api/v1/merchants/${merchantId}/coupons`);
  return answer.status === 200 ? (answer.body.coupons.coupons as { id: string }[]).map((c) => c.id) : answer.body.code;
};
const moderate = (id: string, status: string, headers: Record<string, string> = staff) =>
  t.http("POST", `/coupons/api/v1/coupons/${id}/status`, {
    token,
    headers,
    body: { status: `COUPON_STATUS_${status}`, reason: "checked" },
  });

describe("submitting a code", () => {
  it("for a person, by merchant id: 201, status unknown at 0.5, published, and nothing about the submitter in the answer", async () => {
    const shop = await merchant(t, token);
    const answer = await submit({
      merchant_id: shop.id,
      code: "SPRING10",
      description: "10% off",
      restrictions: "orders over 50",
      evidence: "newsletter",
      expires_at: "2026-05-01T00:00:00Z",
    });
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      merchant_created: false,
      held_for_review: false,
      published: true,
      merchant: { id: shop.id },
    });
    expect(answer.body.coupon).toEqual({
      id: expect.stringMatching(/^cpn_/),
      merchant_id: shop.id,
      code: "SPRING10",
      description: "10% off",
      status: "COUPON_STATUS_UNKNOWN",
      confidence: 0.5,
      reports: { worked: 0, failed: 0 },
      restrictions: "orders over 50",
      expires_at: "2026-05-01T00:00:00Z",
      evidence: "newsletter",
      origin: "COUPON_ORIGIN_PERSON",
      created_at: "2026-04-01T10:00:00Z",
    });
    expect(JSON.stringify(answer.body)).not.toContain("usr_sub1");
    expect((await lookup(answer.body.coupon.id)).body.coupon).toEqual(answer.body.coupon);
    expect(await active(shop.id)).toEqual([answer.body.coupon.id]);
    expect(await eventsAbout(t, answer.body.coupon.id)).toEqual(["coupons.code.submitted", "coupons.code.published"]);
  });

  it("by host or URL, under the most specific rule; a user token submits for its own user", async () => {
    const shop = await merchant(t, token);
    expect((await submit({ host: `WWW.${shop.host}` })).body.merchant.id).toBe(shop.id);
    expect((await submit({ url: `https://m.${shop.host}/sale?x=1` })).body.merchant.id).toBe(shop.id);
    const user = await t.token({ kind: "user", sub: "usr_self1" });
    const own = await t.http("POST", "/coupons/api/v1/coupons/submit", {
      token: user,
      body: { host: shop.host, code: unique("U") },
    });
    expect(own.status).toBe(201);
  });

  it("a site no merchant covers becomes a pending merchant on its eTLD+1; its codes wait for approval, which publishes people's codes", async () => {
    const site = `${unique("new")}.co.uk`;
    const first = await submit({ url: `https://shop.${site}/offers` });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      merchant_created: true,
      published: false,
      merchant: {
        host: site,
        status: "MERCHANT_STATUS_PENDING",
        domains: [{ domain: site, include_subdomains: true, path_prefix: "" }],
      },
    });
    const merchantId = first.body.merchant.id;
    const second = await submit({ host: `www.${site}` });
    expect(second.body).toMatchObject({ merchant_created: false, published: false, merchant: { id: merchantId } });
    const ai = await submit({ host: site }, { "x-pf-origin": "ai" });
    expect(ai.body).toMatchObject({ held_for_review: true, published: false });
    expect((await lookup(first.body.coupon.id)).status).toBe(404);

    const approved = await t.http("POST", `/coupons/api/v1/merchants/${merchantId}/status`, {
      token,
      headers: staff,
      body: { status: "MERCHANT_STATUS_APPROVED" },
    });
    expect(approved.body.published_coupons).toBe(2);
    expect((await active(merchantId)).sort()).toEqual([first.body.coupon.id, second.body.coupon.id].sort());
    expect((await lookup(ai.body.coupon.id)).status).toBe(404);
    expect(await eventsAbout(t, first.body.coupon.id)).toEqual(["coupons.code.submitted", "coupons.code.published"]);
  });

  it("approval announces only the waiting codes that enter active results, not one staff disabled meanwhile", async () => {
    const site = `${unique("wait")}.com`;
    const kept = await submit({ host: site });
    const merchantId = kept.body.merchant.id;
    const dropped = await submit({ host: site });
    expect((await moderate(dropped.body.coupon.id, "DISABLED")).status).toBe(200);
    const approved = await t.http("POST", `/coupons/api/v1/merchants/${merchantId}/status`, {
      token,
      headers: staff,
      body: { status: "MERCHANT_STATUS_APPROVED" },
    });
    expect(approved.status).toBe(200);
    expect(await active(merchantId)).toEqual([kept.body.coupon.id]);
    expect(await eventsAbout(t, kept.body.coupon.id)).toContain("coupons.code.published");
    expect(await eventsAbout(t, dropped.body.coupon.id)).not.toContain("coupons.code.published");
  });

  it("AI output is held for staff review; staff returning it to active results publishes it", async () => {
    const shop = await merchant(t, token);
    const ai = await submit({ merchant_id: shop.id }, { "x-pf-origin": "ai" });
    expect(ai.status).toBe(201);
    expect(ai.body).toMatchObject({
      held_for_review: true,
      published: false,
      coupon: { origin: "COUPON_ORIGIN_AI", status: "COUPON_STATUS_UNKNOWN" },
    });
    expect((await lookup(ai.body.coupon.id)).status).toBe(404);
    expect(await active(shop.id)).toEqual([]);
    const reviewed = await moderate(ai.body.coupon.id, "ACTIVE");
    expect(reviewed.status).toBe(200);
    expect((await lookup(ai.body.coupon.id)).body.coupon).toMatchObject({
      origin: "COUPON_ORIGIN_AI",
      status: "COUPON_STATUS_UNKNOWN",
    });
    expect(await active(shop.id)).toEqual([ai.body.coupon.id]);
  });

  it("refuses a status, confidence or verified field in the body (400 coupons.field_refused)", async () => {
    const shop = await merchant(t, token);
    for (const [field, value] of [
      ["status", "reported_working"],
      ["confidence", 0.9],
      ["verified", true],
      ["verified", false],
      ["status", ""],
    ] as const) {
      const answer = await submit({ merchant_id: shop.id, [field]: value });
      expect(answer.body, field).toMatchObject({ status: 400, code: "coupons.field_refused", field });
    }
    expect(await active(shop.id)).toEqual([]);
  });

  it("refuses bad input, unknown and disabled merchants, duplicates and submissions for nobody", async () => {
    const shop = await merchant(t, token);
    for (const [body, field] of [
      [{ merchant_id: shop.id, code: "" }, "code"],
      [{ merchant_id: shop.id, code: "TWO WORDS" }, "code"],
      [{ merchant_id: shop.id, code: "X".repeat(65) }, "code"],
      [{ code: "NOSITE" }, "merchant_id"],
      [{ url: "ftp://a.com/x" }, "url"],
      [{ url: `https://a.com/${"x".repeat(2000)}` }, "url"],
      [{ host: "a.com/x" }, "host"],
      [{ merchant_id: shop.id, expires_at: "2026-03-01T00:00:00Z" }, "expires_at"],
    ] as const) {
      const answer = await submit(body);
      expect({ status: answer.status, field: answer.body.field }, JSON.stringify(body)).toEqual({ status: 400, field });
    }
    expect((await submit({ host: "co.uk" })).body).toMatchObject({
      status: 400,
      code: "coupons.domain.public_suffix",
      field: "host",
    });
    expect((await submit({ merchant_id: "mer_none" })).body).toMatchObject({
      status: 404,
      code: "coupons.merchant.not_found",
    });
    const first = await submit({ merchant_id: shop.id, code: "ONCE" });
    expect((await submit({ merchant_id: shop.id, code: "once" })).body).toMatchObject({
      status: 409,
      code: "coupons.code.duplicate",
      coupon_id: first.body.coupon.id,
    });
    expect((await submit({ merchant_id: shop.id }, {})).body).toMatchObject({
      status: 403,
      code: "auth.member_required",
    });
    expect((await submit({ merchant_id: shop.id }, { "x-pf-subject": "gst_1" })).body).toMatchObject({
      status: 403,
      code: "auth.member_required",
    });
    await t.http("POST", `/coupons/api/v1/merchants/${shop.id}/status`, {
      token,
      headers: staff,
      body: { status: "MERCHANT_STATUS_DISABLED" },
    });
    expect((await submit({ merchant_id: shop.id })).body).toMatchObject({
      status: 409,
      code: "coupons.merchant.disabled",
    });
  });
});

describe("submissions at once", () => {
  it("two people, two codes, one new site: both 201, one pending merchant holding both codes", async () => {
    const site = `${unique("rush")}.com`;
    const answers = await Promise.all([
      submit({ host: `www.${site}`, code: "RUSHA" }, { "x-pf-subject": "usr_rush1" }),
      submit({ url: `https://${site}/deals`, code: "RUSHB" }, { "x-pf-subject": "usr_rush2" }),
    ]);
    expect(
      answers.map((a) => a.status),
      JSON.stringify(answers.map((a) => a.body)),
    ).toEqual([201, 201]);
    expect(answers.map((a) => a.body.merchant_created).sort()).toEqual([false, true]);
    const merchantId = answers[0].body.merchant.id;
    expect(answers[1].body.merchant.id).toBe(merchantId);
    expect(answers[0].body.merchant).toMatchObject({
      host: site,
      status: "MERCHANT_STATUS_PENDING",
      domains: [{ domain: site, include_subdomains: true, path_prefix: "" }],
    });
    const approved = await t.http("POST", `/coupons/api/v1/merchants/${merchantId}/status`, {
      token,
      headers: staff,
      body: { status: "MERCHANT_STATUS_APPROVED" },
    });
    expect(approved.body.published_coupons).toBe(2);
    expect((await active(merchantId)).sort()).toEqual(answers.map((a) => a.body.coupon.id).sort());
  });

  it("a code submitted while its pending merchant is approved is published either way, never left waiting", async () => {
    for (let i = 0; i < 5; i++) {
      const shop = await merchant(t, token, { status: "MERCHANT_STATUS_PENDING" });
      const [approved, answer] = await Promise.all([
        t.http("POST", `/coupons/api/v1/merchants/${shop.id}/status`, {
          token,
          headers: staff,
          body: { status: "MERCHANT_STATUS_APPROVED" },
        }),
        submit({ merchant_id: shop.id }, { "x-pf-subject": `usr_racer${i}` }),
      ]);
      expect([approved.status, answer.status]).toEqual([200, 201]);
      expect(answer.body.published || approved.body.published_coupons === 1).toBe(true);
      expect(await active(shop.id)).toEqual([answer.body.coupon.id]);
    }
  });

  it("one code twice for one merchant: one 201, the other 409 coupons.code.duplicate naming it, never 500", async () => {
    const shop = await merchant(t, token);
    const answers = await Promise.all([
      submit({ merchant_id: shop.id, code: "TWICE" }, { "x-pf-subject": "usr_twice1" }),
      submit({ merchant_id: shop.id, code: "twice" }, { "x-pf-subject": "usr_twice2" }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    const stored = answers.find((a) => a.status === 201)!.body.coupon.id;
    expect(answers.find((a) => a.status === 409)!.body).toMatchObject({
      code: "coupons.code.duplicate",
      coupon_id: stored,
    });
    expect(await active(shop.id)).toEqual([stored]);
  });

  it("one code twice for one new site: one merchant, one code, the other 409 coupons.code.duplicate", async () => {
    const site = `${unique("twin")}.com`;
    const answers = await Promise.all([
      submit({ host: site, code: "SAME" }, { "x-pf-subject": "usr_twin1" }),
      submit({ host: site, code: "SAME" }, { "x-pf-subject": "usr_twin2" }),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    const conflict = answers.find((a) => a.status === 409)!.body;
    expect(conflict).toMatchObject({ code: "coupons.code.duplicate" });
    // The stored code waits for its pending merchant: lookups hide it, so the conflict does not name it.
    expect(conflict.coupon_id).toBeUndefined();
  });
});

describe("moderating a code", () => {
  it("disables it (out of lookup and active results), marks it expired, and returns it to active with its status recomputed", async () => {
    const shop = await merchant(t, token);
    const id = (await submitted(t, token, shop.id)).coupon.id;
    await t.http("POST", `/coupons/api/v1/coupons/${id}/report`, {
      token,
      headers: { "x-pf-subject": "usr_rep1" },
      body: { outcome: "REPORT_OUTCOME_WORKED" },
    });

    const disabled = await moderate(id, "DISABLED");
    expect(disabled.body.coupon.status).toBe("COUPON_STATUS_DISABLED");
    expect((await lookup(id)).status).toBe(404);
    expect(await active(shop.id)).toEqual([]);

    const expired = await moderate(id, "EXPIRED");
    expect(expired.body.coupon.status).toBe("COUPON_STATUS_EXPIRED");
    expect((await lookup(id)).body.coupon.status).toBe("COUPON_STATUS_EXPIRED");
    expect(await active(shop.id)).toEqual([]);

    const back = await moderate(id, "ACTIVE");
    expect(back.body.coupon).toMatchObject({
      status: "COUPON_STATUS_REPORTED_WORKING",
      confidence: 0.667,
      reports: { worked: 1, failed: 0 },
    });
    expect(await active(shop.id)).toEqual([id]);
    expect(await eventsAbout(t, id)).toEqual([
      "coupons.code.submitted",
      "coupons.code.published",
      "coupons.code.reported",
      "coupons.code.status_changed",
      "coupons.code.status_changed",
      "coupons.code.status_changed",
      "coupons.code.status_changed",
    ]);
  });

  it("asks who is calling before what: a caller who is not staff is 403 auth.staff_required whatever the status", async () => {
    const shop = await merchant(t, token);
    const id = (await submitted(t, token, shop.id, {}, "usr_modtest1")).coupon.id;
    const user = await t.token({ kind: "user", sub: "usr_a1" });
    for (const status of ["UNKNOWN", "REPORTED_WORKING", "REPORTED_FAILED", "DISABLED"]) {
      const asUser = await t.http("POST", `/coupons/api/v1/coupons/${id}/status`, {
        token: user,
        body: { status: `COUPON_STATUS_${status}` },
      });
      expect(asUser.body, status).toMatchObject({ status: 403, code: "auth.staff_required" });
      expect((await moderate(id, status, { "x-pf-subject": "usr_a1" })).body, status).toMatchObject({
        status: 403,
        code: "auth.staff_required",
      });
    }
    expect((await lookup(id)).body.coupon.status).toBe("COUPON_STATUS_UNKNOWN");
  });

  it("refuses reported_working and reported_failed from staff too (400 coupons.status.refused), and other bad statuses", async () => {
    const shop = await merchant(t, token);
    const id = (await submitted(t, token, shop.id)).coupon.id;
    for (const status of ["REPORTED_WORKING", "REPORTED_FAILED"]) {
      expect((await moderate(id, status)).body).toMatchObject({
        status: 400,
        code: "coupons.status.refused",
        field: "status",
      });
      expect((await moderate(id, status, {})).body).toMatchObject({ status: 400, code: "coupons.status.refused" });
    }
    expect((await moderate(id, "UNKNOWN")).body).toMatchObject({ status: 400, field: "status" });
    expect((await moderate("cpn_none", "DISABLED")).body).toMatchObject({
      status: 404,
      code: "coupons.code.not_found",
    });
    expect((await lookup(id)).body.coupon.status).toBe("COUPON_STATUS_UNKNOWN");
  });

  it("a merchant's disabling takes its codes out of active results and lookups; approving it again brings them back", async () => {
    const shop = await merchant(t, token);
    const id = (await submitted(t, token, shop.id)).coupon.id;
    const status = (s: string) =>
      t.http("POST", `/coupons/api/v1/merchants/${shop.id}/status`, { token, headers: staff, body: { status: s } });
    await status("MERCHANT_STATUS_DISABLED");
    expect((await lookup(id)).status).toBe(404);
    expect(await active(shop.id)).toBe("coupons.merchant.not_found");
    await status("MERCHANT_STATUS_APPROVED");
    expect(await active(shop.id)).toEqual([id]);
  });

  it("codes past their expiry leave active results by time alone", async () => {
    const shop = await merchant(t, token);
    const id = (
      await submitted(t, token, shop.id, { expires_at: new Date(clock.now().getTime() + 3_600_000).toISOString() })
    ).coupon.id;
    expect(await active(shop.id)).toEqual([id]);
    clock.advance(3_600_000);
    expect(await active(shop.id)).toEqual([]);
    expect((await lookup(id)).body.coupon.status).toBe("COUPON_STATUS_EXPIRED");
  });
});

describe("a merchant's active codes", () => {
  it("are cursor-paged, newest first", async () => {
    const shop = await merchant(t, token);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await submitted(t, token, shop.id)).coupon.id);
    const first = await t.http("GET", `/coupons/api/v1/merchants/${shop.id}/coupons?limit=2`);
    expect(first.body.coupons.coupons.map((c: { id: string }) => c.id)).toEqual([ids[2], ids[1]]);
    const second = await t.http(
      "GET",
      `/coupons/api/v1/merchants/${shop.id}/coupons?limit=2&cursor=${first.body.coupons.next_cursor}`,
    );
    expect(second.body.coupons).toMatchObject({ coupons: [{ id: ids[0] }], next_cursor: "" });
    // The contract says 1–200: 0 is no page size, never "unset".
    for (const limit of ["0", "500", "-1"]) {
      const refused = await t.http("GET", `/coupons/api/v1/merchants/${shop.id}/coupons?limit=${limit}`);
      expect(refused.body, limit).toMatchObject({ status: 400, code: "request.invalid", field: "limit" });
    }
    expect((await t.http("GET", `/coupons/api/v1/merchants/${shop.id}/coupons?cursor=zz`)).body).toMatchObject({
      status: 400,
      field: "cursor",
    });
    // Forged cursors (well-formed, but not the one text key this list issues) are refused too.
    for (const forged of [["cpn_1", "x"], [""]]) {
      const cursor = Buffer.from(JSON.stringify(forged)).toString("base64url");
      const refused = await t.http("GET", `/coupons/api/v1/merchants/${shop.id}/coupons?cursor=${cursor}`);
      expect(refused.body, JSON.stringify(forged)).toMatchObject({
        status: 400,
        code: "request.invalid",
        field: "cursor",
      });
    }
  });
});
