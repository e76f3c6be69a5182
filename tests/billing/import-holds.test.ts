import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { eventsAbout } from "./checks.js";
import { person } from "./support.js";

const t = usePlatform({ services: ["billing"] });
let admin: string;
let reader: string;
let tips: string;

beforeAll(async () => {
  admin = await t.token({ kind: "service", svc: "ops", caps: ["billing.ledger.admin"] });
  reader = await t.token({ kind: "service", svc: "tips", caps: ["billing.balance.read"] });
  tips = await t.token({ kind: "service", svc: "tips", caps: ["billing.transfer.create"] });
});

let keys = 0;
const money = (minor: number) => ({ minor_units: minor, currency: "USD" });
const recordHold = (spec: object) =>
  t.http("POST", "/billing/api/v1/admin/adjustments", {
    token: admin,
    body: { reason: "imported from the old site", idempotency_key: `ih-${++keys}`, import_hold: spec },
  });
const hold = async (subject: string, minor: number, releaseTo = "ACCOUNT_KIND_CREDIT") => {
  const answer = await recordHold({
    subject,
    release_to: releaseTo,
    amount: money(minor),
    source_ref: `legacy:${subject}`,
  });
  expect(answer.status).toBe(201);
  return answer.body.import_hold;
};
const release = (id: string, body: object = {}) =>
  t.http("POST", `/billing/api/v1/admin/import-holds/${id}/release`, { token: admin, body });
const list = (query = "") => t.http("GET", `/billing/api/v1/admin/import-holds${query}`, { token: admin });
const balances = async (subject: string) =>
  (await t.http("GET", `/billing/api/v1/balances/${subject}`, { token: reader })).body.balances[0];
const transfer = (from: string, minor: number) =>
  t.http("POST", "/billing/api/v1/transfers", {
    token: tips,
    body: { from_subject: from, to_subject: person("cr"), amount: money(minor), idempotency_key: `tr-${++keys}` },
  });

describe("import holds", () => {
  it("hold an imported balance apart from what the subject can spend until released; then it is spendable", async () => {
    const fan = person("fan");
    const held = await hold(fan, 700);
    expect(held).toMatchObject({
      subject: fan,
      release_to: "ACCOUNT_KIND_CREDIT",
      amount: { minor_units: "700", currency: "USD" },
      source_ref: `legacy:${fan}`,
      reason: "imported from the old site",
      status: "IMPORT_HOLD_STATUS_HELD",
      released_by: "",
    });
    expect(held.id).toMatch(/^ih_/);
    expect(await balances(fan)).toMatchObject({ spendable_credit: "0", import_held: "700" });
    expect((await transfer(fan, 100)).body.code).toBe("insufficient_funds");

    const released = await release(held.id, { reason: "verified against the export" });
    expect(released.status).toBe(200);
    expect(released.body.import_hold).toMatchObject({
      id: held.id,
      status: "IMPORT_HOLD_STATUS_RELEASED",
      released_by: "svc:ops",
    });
    expect(released.body.import_hold.released_at).toMatch(/^\d{4}-/);
    expect(await balances(fan)).toMatchObject({ spendable_credit: "700", import_held: "0" });
    expect((await transfer(fan, 100)).status).toBe(201);
    // The hold and its release are ledger admin movements, each published.
    expect(await eventsAbout(t, held.id)).toEqual(["billing.adjustment.posted", "billing.adjustment.posted"]);
  });

  it("release into the creator payable when imported for it", async () => {
    const creator = person("cr");
    const held = await hold(creator, 300, "ACCOUNT_KIND_PAYABLE");
    expect((await release(held.id)).status).toBe(200);
    expect(await balances(creator)).toMatchObject({ creator_payable: "300", spendable_credit: "0", import_held: "0" });
  });

  it("release once: a second release is 409 import_hold.released, an unknown hold 404 import_hold.not_found", async () => {
    const fan = person("fan");
    const held = await hold(fan, 50);
    expect((await release(held.id)).status).toBe(200);
    const again = await release(held.id);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: "import_hold.released", released_by: "svc:ops" });
    const missing = await release("ih_nothere");
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe("import_hold.not_found");
    expect(await balances(fan)).toMatchObject({ spendable_credit: "50" });
  });

  it("release once under concurrent releases", async () => {
    const fan = person("fan");
    const held = await hold(fan, 80);
    const answers = await Promise.all([release(held.id), release(held.id), release(held.id)]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409, 409]);
    expect(await balances(fan)).toMatchObject({ spendable_credit: "80", import_held: "0" });
  });

  it("record a retried hold once (idempotency key)", async () => {
    const fan = person("fan");
    const body = {
      reason: "import",
      idempotency_key: `once-${fan}`,
      import_hold: { subject: fan, release_to: "ACCOUNT_KIND_CREDIT", amount: money(10) },
    };
    const first = await t.http("POST", "/billing/api/v1/admin/adjustments", { token: admin, body });
    const again = await t.http("POST", "/billing/api/v1/admin/adjustments", { token: admin, body });
    expect(again.body).toEqual(first.body);
    expect(await balances(fan)).toMatchObject({ import_held: "10" });
  });

  it("are listed newest first, filtered by status and paged by cursor", async () => {
    const fan = person("fan");
    const [a, b, c] = [await hold(fan, 1), await hold(fan, 2), await hold(fan, 3)];
    await release(b.id);
    const all = (await list("?limit=200")).body.import_holds.import_holds.map((h: { id: string }) => h.id);
    expect(all.indexOf(c.id)).toBeLessThan(all.indexOf(b.id));
    expect(all.indexOf(b.id)).toBeLessThan(all.indexOf(a.id));
    expect([...all].sort().reverse()).toEqual(all);

    const paged: string[] = [];
    let cursor = "";
    do {
      const page = (await list(`?limit=2${cursor ? `&cursor=${cursor}` : ""}`)).body.import_holds;
      expect(page.import_holds.length).toBeLessThanOrEqual(2);
      paged.push(...page.import_holds.map((h: { id: string }) => h.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(paged).toEqual(all);

    const held = (await list("?status=held&limit=200")).body.import_holds.import_holds;
    expect(held.every((h: { status: string }) => h.status === "IMPORT_HOLD_STATUS_HELD")).toBe(true);
    expect(held.map((h: { id: string }) => h.id)).toEqual(expect.arrayContaining([a.id, c.id]));
    const released = (await list("?status=released&limit=200")).body.import_holds.import_holds.map(
      (h: { id: string }) => h.id,
    );
    expect(released).toContain(b.id);
    expect(released).not.toContain(a.id);
  });

  it("refuse a bad list filter, page size or cursor (400 naming the field)", async () => {
    for (const [query, field] of [
      ["?status=pending", "status"],
      ["?limit=201", "limit"],
      ["?cursor=nonsense", "cursor"],
    ]) {
      const answer = await list(query);
      expect({ status: answer.status, field: answer.body.field }).toEqual({ status: 400, field });
    }
  });

  it("refuse a bad hold (400 naming the field), a reason over 500 characters on release", async () => {
    const fan = person("fan");
    const good = { subject: fan, release_to: "ACCOUNT_KIND_CREDIT", amount: money(5), source_ref: "legacy:1" };
    for (const [spec, field] of [
      [{ ...good, subject: "gst_a1" }, "import_hold.subject"],
      [{ ...good, release_to: "ACCOUNT_KIND_PENDING_PAYOUT" }, "import_hold.release_to"],
      [{ ...good, release_to: "ACCOUNT_KIND_UNSPECIFIED" }, "import_hold.release_to"],
      [{ ...good, amount: money(0) }, "import_hold.amount.minor_units"],
      [{ ...good, amount: money(-5) }, "import_hold.amount.minor_units"],
      [{ ...good, amount: undefined }, "import_hold.amount"],
      [{ ...good, source_ref: "x".repeat(201) }, "import_hold.source_ref"],
    ] as const) {
      const answer = await recordHold(spec);
      expect({ field, status: answer.status, named: answer.body.field }).toEqual({ field, status: 400, named: field });
    }
    const held = await hold(fan, 5);
    const answer = await release(held.id, { reason: "x".repeat(501) });
    expect({ status: answer.status, field: answer.body.field }).toEqual({ status: 400, field: "reason" });
    expect(await balances(fan)).toMatchObject({ import_held: "5", spendable_credit: "0" });
  });

  it("refuse holding and releasing while the economy is frozen (409 economy.frozen)", async () => {
    const fan = person("fan");
    const held = await hold(fan, 5);
    const freeze = (frozen: boolean) =>
      t.http("POST", "/billing/api/v1/admin/freeze", { token: admin, body: { frozen, reason: "test" } });
    expect((await freeze(true)).status).toBe(200);
    try {
      expect((await release(held.id)).body.code).toBe("economy.frozen");
      expect((await recordHold({ subject: fan, release_to: "ACCOUNT_KIND_CREDIT", amount: money(5) })).body.code).toBe(
        "economy.frozen",
      );
    } finally {
      await freeze(false);
    }
    expect((await release(held.id)).status).toBe(200);
  });
});
