import { fromBinary, fromJson } from "@bufbuild/protobuf";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { PaidRequestSchema, PaidResultSchema } from "../../gen/pf/tips/v1/checkouts_pb.js";
import { Migration20261125100000_tips_checkout_keys as CheckoutKeys } from "../../services/tips/db/migrations/Migration20261125100000_tips_checkout_keys.js";
import { requestHash } from "../../services/kit/writes/idempotency.js";
import { usePlatform } from "../support/platform.js";
import { as, fund, newKey, person, setProfile, usd, userToken } from "./support.js";

const t = usePlatform({ services: ["tips", "billing"] });

type KeyRow = { scope: string; key: string; request_hash: string; response: Uint8Array };

describe("a checkout's Idempotency-Key", () => {
  it("is kept with the kit's idempotency keys per supporter, hashed as before (kind, then request)", async () => {
    const [creator, supporter] = [person("cre"), person("sup")];
    await setProfile(t, creator);
    await fund(t, supporter, 1000n);
    const key = newKey();
    const body = { creator, amount: usd(100), message: "hi" };
    const supporterCall = as(t, await userToken(t, supporter));
    const answer = await supporterCall("POST", "/paid-messages", body, { "idempotency-key": key });
    expect(answer.status).toBe(201);
    const em = t.platform.contexts.get("tips")!.orm.em.fork();
    const [stored] = await em
      .getConnection()
      .execute<KeyRow[]>(`select request_hash, response from tips.idempotency_keys where scope = ? and key = ?`, [
        `checkout:${supporter}`,
        key,
      ]);
    const hash = requestHash(PaidRequestSchema, fromJson(PaidRequestSchema, body));
    expect(stored.request_hash).toBe(`paid_message:${hash}`);
    expect(fromBinary(PaidResultSchema, stored.response).checkout?.id).toBe(answer.body.checkout.id);
  });

  it("moves from the checkout rows made before (the migration), its answer the checkout's id", async () => {
    const orm = t.platform.contexts.get("tips")!.orm;
    const migration = new CheckoutKeys(orm.em.getDriver(), orm.config);
    migration.up();
    const schema = `tips_legacy_${randomBytes(4).toString("hex")}`;
    const em = orm.em.fork();
    await em.begin();
    const run = <T extends Record<string, unknown>[]>(sql: string, params: unknown[] = []) =>
      em.getConnection().execute<T>(sql, params, "all", em.getTransactionContext());
    try {
      await run(`create schema ${schema}`);
      await run(`set local search_path to ${schema}`);
      await run(`create table idempotency_keys (like tips.idempotency_keys including all)`);
      await run(`create table checkouts (
        id text primary key,
        supporter text not null,
        idempotency_key text not null,
        request_hash text not null,
        created_at timestamptz not null
      )`);
      await run(`insert into checkouts values ('int_legacy1', 'usr_sup1', 'key-1', 'tip:h1', now())`);
      for (const sql of migration.getQueries()) await run(sql as string);
      const keys = await run<KeyRow[]>(`select scope, key, request_hash, response from idempotency_keys`);
      expect(keys.map(({ scope, key, request_hash }) => [scope, key, request_hash])).toEqual([
        ["checkout:usr_sup1", "key-1", "tip:h1"],
      ]);
      expect(fromBinary(PaidResultSchema, keys[0].response).checkout?.id).toBe("int_legacy1");
      const columns = await run<{ column_name: string }[]>(
        `select column_name from information_schema.columns
          where table_schema = ? and table_name = 'checkouts' order by ordinal_position`,
        [schema],
      );
      expect(columns.map((column) => column.column_name)).toEqual(["id", "supporter", "created_at"]);
    } finally {
      await em.rollback();
    }
  });
});
