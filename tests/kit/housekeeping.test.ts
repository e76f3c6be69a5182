import { describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { pruneKitTables } from "../../services/kit/service/housekeeping.js";
import { usePlatform } from "../support/platform.js";

const clock = new ManualClock(new Date("2030-03-01T00:00:00Z"));
const t = usePlatform({ services: ["network"], clock });

describe("kit housekeeping", () => {
  it("removes sent events after a week and inbox marks and idempotency keys after a month, keeping the rest", async () => {
    const ctx = t.platform.contexts.get("network")!;
    const db = ctx.orm.em.getConnection();
    const at = (iso: string) => new Date(iso);
    await db.execute(
      // evt_unsent has failed (never sent), so the running relay leaves it alone: it would stamp sent_at with the
      // database's time, years before this clock.
      `insert into network.outbox (id, subject, schema_id, payload, sent_at, failed_at) values
      ('evt_old', 'network.x', 'x', '{}', ?, null), ('evt_recent', 'network.x', 'x', '{}', ?, null),
      ('evt_unsent', 'network.x', 'x', '{}', null, ?)`,
      [at("2030-02-20T00:00:00Z"), at("2030-02-27T00:00:00Z"), at("2030-01-01T00:00:00Z")],
    );
    await db.execute(
      `insert into network.inbox (consumer, event_id, handled_at) values ('c', 'evt_a', ?), ('c', 'evt_b', ?)`,
      [at("2030-01-15T00:00:00Z"), at("2030-02-15T00:00:00Z")],
    );
    await db.execute(
      `insert into network.idempotency_keys (scope, key, request_hash, response, created_at) values ('s', 'old', 'h', ''::bytea, ?), ('s', 'new', 'h', ''::bytea, ?)`,
      [at("2030-01-15T00:00:00Z"), at("2030-02-15T00:00:00Z")],
    );

    await pruneKitTables(ctx);

    const ids = async (sql: string) => (await db.execute<{ id: string }[]>(sql)).map((row) => row.id);
    expect(
      await ids(`select id from network.outbox where id in ('evt_old', 'evt_recent', 'evt_unsent') order by id`),
    ).toEqual(["evt_recent", "evt_unsent"]);
    expect(await ids(`select event_id as id from network.inbox where consumer = 'c'`)).toEqual(["evt_b"]);
    expect(await ids(`select key as id from network.idempotency_keys where scope = 's'`)).toEqual(["new"]);
  });
});
