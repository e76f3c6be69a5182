import { beforeAll, describe, expect, it } from "vitest";
import { Migration20261126000000_coupon_codes } from "../../services/coupons/db/migrations/Migration20261126000000_coupon_codes.js";
import { codeKeyOf, lookedUp, normalizedCode } from "../../services/coupons/domain/codes.js";
import { qualified } from "../../services/kit/db/orm.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { usePlatform } from "../support/platform.js";
import { backend, merchant, staff, unique } from "./support.js";

const clock = new ManualClock(new Date("2026-04-01T10:00:00Z"));
const t = usePlatform({ services: ["coupons"], clock });
let token: string;
beforeAll(async () => {
  token = await backend(t);
});

const submit = (body: Record<string, unknown>, headers: Record<string, string> = { "x-pf-subject": "usr_codes1" }) =>
  t.http("POST", "/coupons/api/v1/coupons/submit", { token, headers, body });

describe("codes compared (domain)", () => {
  it("are NFKC and upper case: width, ligatures and case never make another code", () => {
    expect(normalizedCode("ＳＡＶＥ１０")).toBe("SAVE10");
    expect(normalizedCode("save10")).toBe("save10");
    expect(codeKeyOf("ＳＡＶＥ１０")).toBe(codeKeyOf("save10"));
    expect(codeKeyOf("ｓａｖｅ１０")).toBe("SAVE10");
    expect(codeKeyOf("ﬁve")).toBe("FIVE");
    expect(codeKeyOf("SAVE10")).not.toBe(codeKeyOf("SAVE1O"));
  });

  it("are looked up while published, not disabled, and of an approved merchant", () => {
    const at = new Date();
    expect(lookedUp({ publishedAt: at, moderation: "" }, "approved")).toBe(true);
    expect(lookedUp({ publishedAt: at, moderation: "expired" }, "approved")).toBe(true);
    expect(lookedUp({ publishedAt: null, moderation: "" }, "approved")).toBe(false);
    expect(lookedUp({ publishedAt: at, moderation: "disabled" }, "approved")).toBe(false);
    expect(lookedUp({ publishedAt: at, moderation: "" }, "pending")).toBe(false);
    expect(lookedUp({ publishedAt: at, moderation: "" }, "disabled")).toBe(false);
  });
});

describe("submitting a code again", () => {
  it("in fullwidth forms is the same code: stored NFKC, then 409 coupons.code.duplicate naming the published one", async () => {
    const shop = await merchant(t, token);
    const first = await submit({ merchant_id: shop.id, code: "ＷＩＤＥ１０" });
    expect(first.status).toBe(201);
    expect(first.body.coupon.code).toBe("WIDE10");
    for (const code of ["WIDE10", "wide10", "ｗｉｄｅ１０"]) {
      expect((await submit({ merchant_id: shop.id, code })).body, code).toMatchObject({
        status: 409,
        code: "coupons.code.duplicate",
        coupon_id: first.body.coupon.id,
      });
    }
  });

  it("never names a code the lookups hide: held AI output, a pending merchant's code, a disabled code", async () => {
    const shop = await merchant(t, token);
    const held = await submit(
      { merchant_id: shop.id, code: "HELD1" },
      { "x-pf-subject": "usr_codes2", "x-pf-origin": "ai" },
    );
    expect(held.body).toMatchObject({ held_for_review: true, published: false });

    const pending = await merchant(t, token, { status: "MERCHANT_STATUS_PENDING" });
    const waiting = await submit({ merchant_id: pending.id, code: "WAIT1" });
    expect(waiting.body.published).toBe(false);

    const disabled = await submit({ merchant_id: shop.id, code: "GONE1" });
    const moderated = await t.http("POST", `/coupons/api/v1/coupons/${disabled.body.coupon.id}/status`, {
      token,
      headers: staff,
      body: { status: "COUPON_STATUS_DISABLED", reason: "fake" },
    });
    expect(moderated.status).toBe(200);

    for (const [merchantId, code, id] of [
      [shop.id, "held1", held.body.coupon.id],
      [pending.id, "ＷＡＩＴ１", waiting.body.coupon.id],
      [shop.id, "gone1", disabled.body.coupon.id],
    ] as const) {
      expect((await t.http("GET", `/coupons/api/v1/coupons/${id}`)).status, code).toBe(404);
      const again = await submit({ merchant_id: merchantId, code }, { "x-pf-subject": "usr_codes3" });
      expect(again.body, code).toMatchObject({ status: 409, code: "coupons.code.duplicate" });
      expect(JSON.stringify(again.body), code).not.toContain(id);
    }
  });
});

describe("the migration of stored codes", () => {
  it("stores every code NFKC with the new key, but never takes a key another code of the merchant holds", async () => {
    const orm = t.platform.contexts.get("coupons")!.orm;
    const em = orm.em.fork();
    const table = qualified(em, "coupons");
    const shop = await merchant(t, token);
    const ids = [unique("cpn_m"), unique("cpn_m"), unique("cpn_m")];
    // As the first migration's rule stored them: upper case only.
    const rows = [
      [ids[0], "ｍｉｇ５", "ＭＩＧ５", "2026-01-01T00:00:00Z"],
      [ids[1], "MIG5", "MIG5", "2026-01-02T00:00:00Z"],
      [ids[2], "ＯＮＬＹ", "ＯＮＬＹ", "2026-01-03T00:00:00Z"],
    ];
    for (const [id, code, key, at] of rows) {
      await em.getConnection().execute(
        `insert into ${table} (id, merchant_id, code, code_key, description, restrictions, evidence, origin,
           submitted_by, held_for_review, published_at, created_at, updated_at)
         values (?, ?, ?, ?, '', '', '', 'person', 'usr_old', false, ?, ?, ?)`,
        [id, shop.id, code, key, at, at, at],
      );
    }
    const migration = new Migration20261126000000_coupon_codes(em.getDriver(), orm.config);
    await migration.up();
    const after = await em
      .getConnection()
      .execute<{ id: string; code: string; code_key: string }[]>(
        `select id, code, code_key from ${table} where id in (?) order by created_at`,
        [ids],
      );
    expect(after).toEqual([
      { id: ids[0], code: "mig5", code_key: "ＭＩＧ５" },
      { id: ids[1], code: "MIG5", code_key: "MIG5" },
      { id: ids[2], code: "ONLY", code_key: "ONLY" },
    ]);
  });
});
