import { beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { expireDue } from "../../services/deals/workers/expiry.js";
import { AuditRow, OfferRow } from "../../services/deals/db/entities.js";
import { usePlatform } from "../support/platform.js";
import { actingFor, ALL_DEALS, dealsOf, person, submit } from "./support.js";

const clock = new ManualClock(new Date("2026-05-01T12:00:00Z"));
const t = usePlatform({ services: ["deals"], clock, env: { PF_DEALS_EXPIRY_EVERY_MS: "2000000000" } });
let web: string;
let as: ReturnType<typeof actingFor>;

beforeAll(async () => {
  web = await t.token({ kind: "service", svc: "web", caps: ALL_DEALS });
  as = actingFor(t, () => web);
});

describe("submit", () => {
  it("acts for X-PF-Subject and records the first observation with its time, nothing defaulted", async () => {
    const who = person();
    const answer = await as("POST", "/offers", who, {
      link: "https://shop.example/castle?utm_source=x",
      title: "Castle",
      observation: { price: { minor_units: 39999, currency: "EUR" } },
    });
    expect(answer.status).toBe(201);
    expect(answer.body.offer).toMatchObject({
      submitted_by: who,
      status: "OFFER_STATUS_ACTIVE",
      ai_assisted: false,
      noindex: false,
    });
    expect(answer.body.observation).toMatchObject({
      observed_by: who,
      price: { minor_units: "39999", currency: "EUR" },
      condition: "CONDITION_UNSPECIFIED",
      availability: "AVAILABILITY_UNSPECIFIED",
    });
    expect(answer.body.observation.shipping).toBeUndefined();
    expect(answer.body.observation.observed_at).toBe("2026-05-01T12:00:00Z");
    expect(answer.body.offer.tally.observations).toBe(1);
  });

  it("answers 409 offer.duplicate carrying the existing offer for a link already posted (tracking parameters aside)", async () => {
    const first = await submit(t, web, person(), { link: "https://www.shop.example/dup/1" });
    const answer = await as("POST", "/offers", person(), {
      link: "https://shop.example/dup/1/?utm_campaign=y#top",
      title: "Again",
    });
    expect(answer.status).toBe(409);
    expect(answer.body.code).toBe("offer.duplicate");
    expect(answer.body.offer).toMatchObject({ id: first.offer.id, title: "Lego castle 10305" });
  });

  it("a retry with the same idempotency key answers the first result", async () => {
    const who = person();
    const body = { link: "https://shop.example/idem", title: "Idem", idempotency_key: "k1" };
    const a = await as("POST", "/offers", who, body);
    const b = await as("POST", "/offers", who, body);
    expect(b.status).toBe(201);
    expect(b.body.offer.id).toBe(a.body.offer.id);
  });

  it("with X-PF-Origin: ai the text is disclosed and noindex until a person reviews it (usr_ only)", async () => {
    const offer = (await submit(t, web, person(), {}, { "x-pf-origin": "ai" })).offer;
    expect(offer).toMatchObject({ ai_assisted: true, noindex: true });
    const notStaff = await as("POST", `/offers/${offer.id}/review`, person(), {});
    expect(notStaff.body).toMatchObject({ status: 403, code: "auth.staff_required" });
    const guest = await as("POST", `/offers/${offer.id}/review`, "gst_g1", {}, { "x-pf-staff": "1" });
    expect(guest.body).toMatchObject({ status: 403, code: "deals.review_person_required" });
    const service = await t.http("POST", `/deals/api/v1/offers/${offer.id}/review`, { token: web, body: {} });
    expect(service.body.code).toBe("deals.review_person_required");
    const staff = person("staff");
    const reviewed = await as(
      "POST",
      `/offers/${offer.id}/review`,
      staff,
      { reason: "checked" },
      { "x-pf-staff": "1" },
    );
    expect(reviewed.status).toBe(200);
    expect(reviewed.body.offer.offer).toMatchObject({ ai_assisted: true, noindex: false, reviewed_by: staff });
    expect(reviewed.body.offer.audit).toMatchObject({ action: "review", actor: staff, reason: "checked" });
  });

  it("refuses bad input by field: link, title, a past stated expiry, a person's observed_at, an unknown product", async () => {
    const who = person();
    const cases: [Record<string, unknown>, string][] = [
      [{ link: "ftp://x.example/a", title: "T" }, "link"],
      [{ link: "https://x.example/a", title: " " }, "title"],
      [{ link: "https://x.example/a", title: "T", expires_at: "2026-04-01T00:00:00Z" }, "expires_at"],
      [
        { link: "https://x.example/a", title: "T", observation: { observed_at: "2026-04-01T00:00:00Z" } },
        "observation.observed_at",
      ],
      [
        { link: "https://x.example/a", title: "T", observation: { price: { minor_units: 1, currency: "eur" } } },
        "observation.price.currency",
      ],
      [{ link: "https://x.example/a", title: "T", product_id: "prd_none" }, "product_id"],
    ];
    const user = await t.token({ kind: "user", sub: who });
    for (const [body, field] of cases) {
      const answer = await t.http("POST", "/deals/api/v1/offers", { token: user, body });
      expect(answer.status, field).toBe(400);
      expect(answer.body.field).toBe(field);
    }
  });

  it("reports every rule the contract declares that a request breaks, each naming its field", async () => {
    const fields = (answer: { body: { errors?: { field: string }[] } }) => answer.body.errors?.map((e) => e.field);
    const who = person();
    const offer = await as("POST", "/offers", who, {
      link: "https://x.example/many-faults",
      title: " ",
      description: "d".repeat(5001),
      observation: { condition: 9, availability: 9 },
    });
    expect(offer.body).toMatchObject({ status: 400, code: "request.invalid", field: "title" });
    expect(fields(offer)).toEqual(["title", "description", "observation.condition", "observation.availability"]);
    const { offer: posted } = await submit(t, web, person());
    const flag = await as("POST", `/offers/${posted.id}/flags`, who, {
      reason: "FLAG_REASON_VOTE_RING",
      note: "n".repeat(1001),
    });
    expect(fields(flag)).toEqual(["reason", "note"]);
  });

  it("refuses links to hosts that are not public, or with a user name or password (400 naming link), and stores none", async () => {
    const user = await t.token({ kind: "user", sub: person() });
    for (const link of [
      "http://127.0.0.1/a",
      "http://2130706433/a",
      "http://0x7f.1/a",
      "http://localhost:8080/a",
      "http://admin.localhost/a",
      "http://intranet/a",
      "http://169.254.169.254/latest/meta-data",
      "http://10.1.2.3/a",
      "http://192.168.1.1/a",
      "http://0.0.0.0/a",
      "http://[::1]/a",
      "http://[::ffff:127.0.0.1]/a",
      "http://[fe80::1]/a",
      "http://[fd00::1]/a",
      "http://224.0.0.1/a",
      "https://user:pass@shop.example/a",
      "https://user@shop.example/a",
    ]) {
      const answer = await t.http("POST", "/deals/api/v1/offers", { token: user, body: { link, title: "T" } });
      expect(answer.status, link).toBe(400);
      expect(answer.body).toMatchObject({ code: "request.invalid", field: "link" });
    }
    const fine = await t.http("POST", "/deals/api/v1/offers", {
      token: user,
      body: { link: "http://93.184.216.34/public-address", title: "T" },
    });
    expect(fine.status).toBe(201);
  });

  it("a service without X-PF-Subject acts for nobody (403 auth.person_required)", async () => {
    const answer = await t.http("POST", "/deals/api/v1/offers", {
      token: web,
      body: { link: "https://x.example/nobody", title: "T" },
    });
    expect(answer.body).toMatchObject({ status: 403, code: "auth.person_required" });
  });
});

describe("update and observations", () => {
  it("the submitter edits; another person is refused the edit but records an observation (a new row each time)", async () => {
    const [owner, other] = [person(), person()];
    const offer = (await submit(t, web, owner)).offer;
    const edit = await as("PATCH", `/offers/${offer.id}`, owner, { title: "Lego castle, cheaper", category: "toys" });
    expect(edit.status).toBe(200);
    expect(edit.body.offer).toMatchObject({ title: "Lego castle, cheaper", category: "toys" });
    const refused = await as("PATCH", `/offers/${offer.id}`, other, { title: "Mine" });
    expect(refused.body).toMatchObject({ status: 403, code: "offer.not_submitter" });
    const viaPatch = await as("PATCH", `/offers/${offer.id}`, other, {
      observation: { availability: "AVAILABILITY_IN_STOCK" },
    });
    expect(viaPatch.status).toBe(200);
    expect(viaPatch.body.observation).toMatchObject({ observed_by: other, availability: "AVAILABILITY_IN_STOCK" });
    expect(viaPatch.body.observation.price).toBeUndefined();
    const posted = await as("POST", `/offers/${offer.id}/observations`, other, {
      observation: { price: { minor_units: 100, currency: "EUR" }, condition: "CONDITION_USED" },
    });
    expect(posted.status).toBe(201);
    expect(posted.body.observation.id).not.toBe(viaPatch.body.observation.id);
    expect(posted.body.offer.tally.observations).toBe(3);
  });

  it("observed_at stated by a service is kept, never in the future; offer fields are refused on the observations route", async () => {
    const offer = (await submit(t, web, person())).offer;
    const past = await as("POST", `/offers/${offer.id}/observations`, person(), {
      observation: { observed_at: "2026-05-01T11:00:00Z" },
    });
    expect(past.body.observation.observed_at).toBe("2026-05-01T11:00:00Z");
    const future = await as("POST", `/offers/${offer.id}/observations`, person(), {
      observation: { observed_at: "2026-05-01T12:00:01Z" },
    });
    expect(future.body).toMatchObject({ status: 400, field: "observation.observed_at" });
    const edit = await as("POST", `/offers/${offer.id}/observations`, person(), { title: "x" });
    expect(edit.body).toMatchObject({ status: 400, field: "title" });
    const missing = await as("POST", "/offers/off_missing/observations", person(), {});
    expect(missing.body).toMatchObject({ status: 404, code: "offer.not_found" });
  });
});

describe("expire", () => {
  it("by the submitter or a moderator only; an expired offer takes no observations", async () => {
    const owner = person();
    const offer = (await submit(t, web, owner)).offer;
    const other = await as("POST", `/offers/${offer.id}/expire`, person(), {});
    expect(other.body).toMatchObject({ status: 403, code: "offer.not_submitter" });
    const own = await as("POST", `/offers/${offer.id}/expire`, owner, {});
    expect(own.body.offer).toMatchObject({ status: "OFFER_STATUS_EXPIRED", expired_at: "2026-05-01T12:00:00Z" });
    const late = await as("POST", `/offers/${offer.id}/observations`, person(), {});
    expect(late.body).toMatchObject({ status: 409, code: "offer.not_active", offer_status: "expired" });
    const second = (await submit(t, web, person())).offer;
    const staff = person("staff");
    const byStaff = await as("POST", `/offers/${second.id}/expire`, staff, { reason: "ended" }, { "x-pf-staff": "1" });
    expect(byStaff.body.offer.status).toBe("OFFER_STATUS_EXPIRED");
    // Admitted as a moderator: the staff person is audited, as for any moderation.
    const audits = await dealsOf(t).orm.em.fork().find(AuditRow, { offerId: second.id });
    expect(audits.map((row) => [row.action, row.actor, row.reason])).toEqual([["expire", staff, "ended"]]);
    // A person's own token expires their own offer (the "own" rule), and no audit is written for it.
    const mine = person();
    const third = (await submit(t, web, mine)).offer;
    const userToken = await t.token({ kind: "user", sub: mine });
    const byOwnToken = await t.http("POST", `/deals/api/v1/offers/${third.id}/expire`, { token: userToken, body: {} });
    expect(byOwnToken.body.offer.status).toBe("OFFER_STATUS_EXPIRED");
    expect(await dealsOf(t).orm.em.fork().count(AuditRow, { offerId: third.id })).toBe(0);
  });

  it("a service acting for nobody is a moderator on the route its token passed (no other capability judged here)", async () => {
    const expirer = await t.token({ kind: "service", svc: "sweeper", caps: ["deals.offer.expire"] });
    const offer = (await submit(t, web, person())).offer;
    const answer = await t.http("POST", `/deals/api/v1/offers/${offer.id}/expire`, {
      token: expirer,
      body: { reason: "gone" },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.offer.status).toBe("OFFER_STATUS_EXPIRED");
    const ctx = dealsOf(t);
    const audits = await ctx.orm.em.fork().find(AuditRow, { offerId: offer.id });
    expect(audits.map((row) => [row.action, row.actor, row.reason])).toEqual([["expire", "svc:sweeper", "gone"]]);
    // Acting for a person it does not state is staff, the same token only expires that person's own offers.
    const other = (await submit(t, web, person())).offer;
    const forPerson = await t.http("POST", `/deals/api/v1/offers/${other.id}/expire`, {
      token: expirer,
      body: {},
      headers: { "x-pf-subject": person() },
    });
    expect(forPerson.body).toMatchObject({ status: 403, code: "offer.not_submitter" });
  });

  it("a first-party app holding deals.offer.expire acts for nobody and is no moderator: it expires nobody's offer", async () => {
    const app = await t.token({ kind: "app", app_id: "app_web", fp: true, caps: ["deals.offer.expire"] });
    const offer = (await submit(t, web, person())).offer;
    const answer = await t.http("POST", `/deals/api/v1/offers/${offer.id}/expire`, { token: app, body: {} });
    expect(answer.body).toMatchObject({ status: 403, code: "auth.person_required" });
  });

  it("offers with a stated end expire on their own at it; without one they never do", async () => {
    const ended = (await submit(t, web, person(), { expires_at: "2026-05-02T00:00:00Z" })).offer;
    const open = (await submit(t, web, person())).offer;
    const ctx = dealsOf(t);
    clock.advance(24 * 3_600_000);
    // The background worker may have come by first: what counts is the offer's state, not who expired it.
    await expireDue(ctx);
    const row = await ctx.orm.em.fork().findOneOrFail(OfferRow, { id: ended.id });
    expect(row).toMatchObject({ expiredAt: new Date("2026-05-02T00:00:00Z"), expiredBy: "svc:deals" });
    const a = await as("PATCH", `/offers/${ended.id}`, person(), { observation: { condition: "CONDITION_NEW" } });
    expect(a.body).toMatchObject({ status: 409, code: "offer.not_active" });
    const b = await as("PATCH", `/offers/${open.id}`, person(), { observation: { condition: "CONDITION_NEW" } });
    expect(b.body.offer.status).toBe("OFFER_STATUS_ACTIVE");
    clock.advance(-24 * 3_600_000);
  });

  it("past its stated end an offer takes no votes or observations, before the expiry worker runs", async () => {
    const owner = person();
    const offer = (await submit(t, web, owner, { expires_at: "2026-05-01T13:00:00Z" })).offer;
    clock.advance(3_600_000);
    try {
      const vote = await as("PUT", `/offers/${offer.id}/vote`, person(), { value: 1 });
      expect(vote.body).toMatchObject({ status: 409, code: "offer.not_active", offer_status: "expired" });
      const observed = await as("POST", `/offers/${offer.id}/observations`, person(), {});
      expect(observed.body).toMatchObject({ status: 409, code: "offer.not_active", offer_status: "expired" });
      // Its submitter cannot revive it by stating a later end: it ended at the first one.
      const edit = await as("PATCH", `/offers/${offer.id}`, owner, { expires_at: "2026-05-03T00:00:00Z" });
      expect(edit.body.offer).toMatchObject({ status: "OFFER_STATUS_EXPIRED", expired_at: "2026-05-01T13:00:00Z" });
      const again = await as("PUT", `/offers/${offer.id}/vote`, person(), { value: 1 });
      expect(again.body).toMatchObject({ status: 409, code: "offer.not_active" });
    } finally {
      clock.advance(-3_600_000);
    }
  });
});

describe("moderation", () => {
  it("disable and enable are audited, moderators only; a person's own token is never a moderator", async () => {
    const offer = (await submit(t, web, person())).offer;
    const user = await t.token({ kind: "user", sub: person() });
    const refused = await t.http("POST", `/deals/api/v1/offers/${offer.id}/disable`, { token: user, body: {} });
    expect(refused.body).toMatchObject({ status: 403, code: "auth.staff_required" });
    const notStaff = await as("POST", `/offers/${offer.id}/disable`, person(), {});
    expect(notStaff.body.code).toBe("auth.staff_required");
    const staff = person("staff");
    const disabled = await as("POST", `/offers/${offer.id}/disable`, staff, { reason: "spam" }, { "x-pf-staff": "1" });
    expect(disabled.body.offer.offer.status).toBe("OFFER_STATUS_DISABLED");
    expect(disabled.body.offer.audit).toMatchObject({ action: "disable", actor: staff, reason: "spam" });
    const enabled = await t.http("POST", `/deals/api/v1/offers/${offer.id}/enable`, { token: web, body: {} });
    expect(enabled.body.offer.offer.status).toBe("OFFER_STATUS_ACTIVE");
    expect(enabled.body.offer.audit).toMatchObject({ action: "enable", actor: "svc:web" });
    // Unlike on expire, a first-party app acting for nobody moderates here (staff, apps included).
    const app = await t.token({ kind: "app", app_id: "app_mod", fp: true, caps: ["deals.offer.moderate"] });
    const byApp = await t.http("POST", `/deals/api/v1/offers/${offer.id}/disable`, { token: app, body: {} });
    expect(byApp.body.offer.audit).toMatchObject({ action: "disable", actor: "app:app_mod" });
  });
});
