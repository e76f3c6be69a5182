import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";

const t = usePlatform({ services: ["network"] });
let coins: string;
let otherApp: string;
let noApp: string;
let seq = 0;
const user = () => `usr_c${++seq}x${Date.now().toString(36)}`;

beforeAll(async () => {
  const caps = ["network.coins.credit", "network.coins.debit", "network.coins.transfer"];
  coins = await t.token({ kind: "service", svc: "community", caps, app_id: "app_main" });
  otherApp = await t.token({ kind: "service", svc: "community", caps, app_id: "app_other" });
  noApp = await t.token({ kind: "service", svc: "community", caps });
});

const credit = (body: unknown, token = coins) => t.http("POST", "/network/internal/coins/credit", { token, body });
const debit = (body: unknown, token = coins) => t.http("POST", "/network/internal/coins/debit", { token, body });
const transfer = (body: unknown, token = coins) => t.http("POST", "/network/internal/coins/transfer", { token, body });

describe("coin credit", () => {
  it("credits and answers the balance with the entry", async () => {
    const subject = user();
    const answer = await credit({ subject, amount: 30, idempotency_key: `k-${subject}`, reason: "stream watched" });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ subject, app_id: "app_main", balance: "30" });
    expect(answer.body.entry_id).toMatch(/^cne_/);
  });

  it("is idempotent by idempotency_key: a retry answers the first result and applies once", async () => {
    const subject = user();
    const body = { subject, amount: 7, idempotency_key: `once-${subject}` };
    const first = await credit(body);
    const again = await credit(body);
    expect(again.body).toEqual(first.body);
    const next = await credit({ subject, amount: 1, idempotency_key: `two-${subject}` });
    expect(next.body.balance).toBe("8");
  });

  it("refuses the same key with another request (409 idempotency.mismatch)", async () => {
    const subject = user();
    await credit({ subject, amount: 7, idempotency_key: `m-${subject}` });
    const answer = await credit({ subject, amount: 8, idempotency_key: `m-${subject}` });
    expect(answer.status).toBe(409);
    expect(answer.body.code).toBe("idempotency.mismatch");
  });

  it("counts naming the token's own app_id and leaving it out as one request under a key", async () => {
    const subject = user();
    const first = await credit({ subject, amount: 4, idempotency_key: `app-${subject}` });
    const named = await credit({ subject, amount: 4, idempotency_key: `app-${subject}`, app_id: "app_main" });
    expect(named.status).toBe(200);
    expect(named.body).toEqual(first.body);
    expect(named.body.balance).toBe("4");
  });

  it("takes the key from the Idempotency-Key header too, and needs one", async () => {
    const subject = user();
    const viaHeader = await t.http("POST", "/network/internal/coins/credit", {
      token: coins,
      body: { subject, amount: 2 },
      headers: { "idempotency-key": `h-${subject}` },
    });
    expect(viaHeader.status).toBe(200);
    const missing = await credit({ subject, amount: 2 });
    expect(missing.status).toBe(400);
    expect(missing.body).toMatchObject({ code: "request.invalid", field: "idempotency_key" });
  });

  it("refuses malformed input with 400 naming the field, never 500", async () => {
    const subject = user();
    for (const [body, field] of [
      [{ subject, amount: 0, idempotency_key: "z" }, "amount"],
      [{ subject, amount: -3, idempotency_key: "z" }, "amount"],
      [{ subject: "bob", amount: 3, idempotency_key: "z" }, "subject"],
      [{ subject: "gst_1", amount: 3, idempotency_key: "z" }, "subject"],
      [{ subject, amount: "1000000000000000001", idempotency_key: "z" }, "amount"],
      [{ subject, amount: 3, idempotency_key: "z", reason: "r".repeat(201) }, "reason"],
      [{ subject, amount: 3, idempotency_key: "k".repeat(256) }, "idempotency_key"],
    ] as const) {
      const answer = await credit(body);
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(answer.body).toMatchObject({ code: "request.invalid", field });
    }
    for (const body of [
      '{"subject":',
      JSON.stringify({ subject, amount: "many" }),
      JSON.stringify({ subject, amount: 1.5 }),
      JSON.stringify({ subject, amount: 1, price: 3 }),
    ]) {
      const answer = await credit(body);
      expect(answer.status, body).toBe(400);
      expect(answer.body.code).toBe("request.invalid");
    }
  });
});

describe("coin debit", () => {
  it("debits and answers 409 insufficient_funds when the balance is short", async () => {
    const subject = user();
    await credit({ subject, amount: 10, idempotency_key: `d-${subject}` });
    const ok = await debit({ subject, amount: 4 });
    expect(ok.body.balance).toBe("6");
    const short = await debit({ subject, amount: 7 });
    expect(short.status).toBe(409);
    expect(short.body).toMatchObject({ code: "insufficient_funds", status: 409, balance: "6" });
    const empty = await debit({ subject: user(), amount: 1 });
    expect(empty.body.code).toBe("insufficient_funds");
  });
});

describe("a token acts only for its own app_id, on every coin route", () => {
  it.each([
    [
      "credit",
      "/network/internal/coins/credit",
      (who: string) => ({ subject: who, amount: 1, idempotency_key: `x-${who}`, app_id: "app_main" }),
    ],
    ["debit", "/network/internal/coins/debit", (who: string) => ({ subject: who, amount: 1, app_id: "app_main" })],
    [
      "transfer",
      "/network/internal/coins/transfer",
      (who: string) => ({ from_subject: who, to_subject: user(), amount: 1, app_id: "app_main" }),
    ],
  ])("%s: 403 coins.app_mismatch for another app, coins.app_required without one", async (_route, path, body) => {
    const who = user();
    expect((await t.http("POST", path, { token: otherApp, body: body(who) })).body).toMatchObject({
      status: 403,
      code: "coins.app_mismatch",
    });
    expect((await t.http("POST", path, { token: noApp, body: body(who) })).body).toMatchObject({
      status: 403,
      code: "coins.app_required",
    });
  });
});

describe("a token acts only for its own app_id", () => {
  it("keeps each app's coins apart and refuses another app_id (403 coins.app_mismatch)", async () => {
    const subject = user();
    await credit({ subject, amount: 10, idempotency_key: `a-${subject}` });
    const elsewhere = await debit({ subject, amount: 1 }, otherApp);
    expect(elsewhere.body.code).toBe("insufficient_funds");
    const mismatch = await debit({ subject, amount: 1, app_id: "app_main" }, otherApp);
    expect(mismatch.status).toBe(403);
    expect(mismatch.body.code).toBe("coins.app_mismatch");
    const without = await debit({ subject, amount: 1, app_id: "app_main" }, noApp);
    expect(without.status).toBe(403);
    expect(without.body.code).toBe("coins.app_required");
  });
});

describe("idempotency keys", () => {
  it("belong to the calling service: two services choosing the same key both apply", async () => {
    const subject = user();
    const caps = ["network.coins.credit"];
    const tips = await t.token({ kind: "service", svc: "tips", caps, app_id: "app_main" });
    const community = await t.token({ kind: "service", svc: "community", caps, app_id: "app_main" });
    const body = { subject, amount: 5, idempotency_key: `welcome-${subject}` };
    expect((await credit(body, tips)).body.balance).toBe("5");
    expect((await credit(body, community)).body.balance).toBe("10");
    expect((await credit(body, tips)).body.balance).toBe("5");
  });
});

describe("coin transfer", () => {
  it("moves coins between two users atomically", async () => {
    const [from, to] = [user(), user()];
    await credit({ subject: from, amount: 10, idempotency_key: `t-${from}` });
    const answer = await transfer({ from_subject: from, to_subject: to, amount: 4, idempotency_key: `tr-${from}` });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      app_id: "app_main",
      from: { subject: from, balance: "6" },
      to: { subject: to, balance: "4" },
    });
    expect(answer.body.transfer_id).toMatch(/^cnt_/);
    const retry = await transfer({ from_subject: from, to_subject: to, amount: 4, idempotency_key: `tr-${from}` });
    expect(retry.body).toEqual(answer.body);
    const short = await transfer({ from_subject: from, to_subject: to, amount: 7 });
    expect(short.body.code).toBe("insufficient_funds");
    const after = await debit({ subject: to, amount: 4 });
    expect(after.body.balance).toBe("0");
  });

  it("moves nothing when the receiving side refuses: both balances and the ledger stay as they were", async () => {
    const [from, to] = [user(), user()];
    await credit({ subject: from, amount: 10, idempotency_key: `f-${from}` });
    await credit({ subject: to, amount: "1000000000000000", idempotency_key: `f-${to}` });
    const refused = await transfer({ from_subject: from, to_subject: to, amount: 4 });
    expect(refused.body).toMatchObject({ status: 409, code: "coins.balance_limit" });
    const db = t.platform.contexts.get("network")!.orm.em.getConnection();
    const rows = await db.execute<{ subject: string; balance: string; entries: string }[]>(
      `select a.subject, a.balance, (select count(*) from network.coin_entries e where e.app_id = a.app_id and e.subject = a.subject) as entries
       from network.coin_accounts a where a.app_id = 'app_main' and a.subject in (?) order by a.subject`,
      [[from, to]],
    );
    expect(Object.fromEntries(rows.map((r) => [r.subject, [r.balance, r.entries]]))).toEqual({
      [from]: ["10", "1"],
      [to]: ["1000000000000000", "1"],
    });
  });

  it("refuses a transfer to oneself", async () => {
    const who = user();
    const answer = await transfer({ from_subject: who, to_subject: who, amount: 1 });
    expect(answer.status).toBe(400);
    expect(answer.body.field).toBe("to_subject");
  });
});

describe("under concurrency", () => {
  it("many parallel debits never overdraw", async () => {
    const subject = user();
    await credit({ subject, amount: 20, idempotency_key: `p-${subject}` });
    const answers = await Promise.all(Array.from({ length: 60 }, () => debit({ subject, amount: 1 })));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(20);
    expect(answers.filter((a) => a.status === 409).every((a) => a.body.code === "insufficient_funds")).toBe(true);
    expect(answers.filter((a) => a.status !== 200 && a.status !== 409)).toHaveLength(0);
    const final = await credit({ subject, amount: 1, idempotency_key: `p2-${subject}` });
    expect(final.body.balance).toBe("1");
  });

  it("repeated credits with one key apply once", async () => {
    const subject = user();
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => credit({ subject, amount: 5, idempotency_key: `same-${subject}` })),
    );
    expect(answers.every((a) => a.status === 200 && a.body.balance === "5")).toBe(true);
    expect(new Set(answers.map((a) => a.body.entry_id)).size).toBe(1);
  });

  it("parallel transfers keep the total and leave no balance negative", async () => {
    const people = Array.from({ length: 5 }, user);
    for (const who of people) await credit({ subject: who, amount: 50, idempotency_key: `s-${who}` });
    const moves = Array.from({ length: 80 }, (_, i) => {
      const from = people[i % 5];
      const to = people[(i * 3 + 1) % 5] === from ? people[(i + 1) % 5] : people[(i * 3 + 1) % 5];
      return transfer({ from_subject: from, to_subject: to, amount: 1 + (i % 17) });
    });
    const answers = await Promise.all(moves);
    expect(answers.filter((a) => a.status !== 200 && a.body.code !== "insufficient_funds").map((a) => a.body)).toEqual(
      [],
    );
    const ctx = t.platform.contexts.get("network")!;
    const rows = await ctx.orm.em.getConnection().execute<{ subject: string; balance: string; entries: string }[]>(
      `select a.subject, a.balance, (select coalesce(sum(delta), 0) from network.coin_entries e where e.app_id = a.app_id and e.subject = a.subject) as entries
       from network.coin_accounts a where a.app_id = 'app_main' and a.subject in (?)`,
      [people],
    );
    expect(rows).toHaveLength(5);
    expect(rows.reduce((sum, row) => sum + BigInt(row.balance), 0n)).toBe(250n);
    for (const row of rows) {
      expect(BigInt(row.balance)).toBeGreaterThanOrEqual(0n);
      expect(row.entries).toBe(row.balance);
    }
  });
});
