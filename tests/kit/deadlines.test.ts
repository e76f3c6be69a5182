import { holdCoinAccount } from "../support/row-lock.js";
import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { DATABASE_SERVER, itWith } from "../support/skips.js";
import { until } from "../support/until.js";

const t = usePlatform({ services: ["network"], env: { PF_CALL_TIMEOUT_MS: "700" } });

describe("a call whose deadline passes", () => {
  it("answers 504 deadline_exceeded and writes nothing, even once what held it is gone", async () => {
    const token = await t.token({
      kind: "service",
      svc: "community",
      caps: ["network.coins.credit", "network.coins.debit"],
      app_id: "app_dl",
    });
    const credit = await t.http("POST", "/network/internal/coins/credit", {
      token,
      body: { subject: "usr_dl1", amount: 10, idempotency_key: "dl-1" },
    });
    expect(credit.body.balance).toBe("10");

    // Another session holds the account, so the debit waits past its deadline inside its transaction.
    const held = await holdCoinAccount(t.platform.databaseUrl, "app_dl", "usr_dl1");
    const debit = t.http("POST", "/network/internal/coins/debit", { token, body: { subject: "usr_dl1", amount: 3 } });
    const late = await debit;
    expect(late.status).toBe(504);
    expect(late.body).toMatchObject({ status: 504, code: "deadline_exceeded" });
    await held.release();

    // The debit went on once the row was free, and rolled back instead of committing: it queued for the row
    // first, so a read that locks the row answers only once the debit's transaction ended.
    const [row] = await t.platform.contexts
      .get("network")!
      .orm.em.getConnection()
      .execute<{ balance: string }[]>(
        `select balance from network.coin_accounts where app_id = 'app_dl' and subject = 'usr_dl1' for update`,
      );
    expect(row.balance).toBe("10");
  });

  // On the embedded database the holder keeps its one session: the debit never reaches the row.
  itWith(DATABASE_SERVER, "ends its wait for a row at the deadline, while the row is still held", async () => {
    const token = await t.token({
      kind: "service",
      svc: "community",
      caps: ["network.coins.credit", "network.coins.debit"],
      app_id: "app_dl",
    });
    const credit = await t.http("POST", "/network/internal/coins/credit", {
      token,
      body: { subject: "usr_dl2", amount: 10, idempotency_key: "dl-2" },
    });
    expect(credit.body.balance).toBe("10");
    const held = await holdCoinAccount(t.platform.databaseUrl, "app_dl", "usr_dl2");
    try {
      const debit = t.http("POST", "/network/internal/coins/debit", { token, body: { subject: "usr_dl2", amount: 3 } });
      await held.queued();
      expect((await debit).status).toBe(504);
      // Its statement_timeout (the call's time left, set as its transaction began) ended the wait: nothing waits for
      // the holder any more, and the debit's connection is free.
      await until(async () => !(await held.blocking()));
    } finally {
      await held.release();
    }
  });
});
