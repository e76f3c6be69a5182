import { describe, expect, it } from "vitest";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { streamer } from "./support/streams.js";
import { FakeWorker, sha256 } from "./support/worker.js";

const clock = new ManualClock(new Date());
const t = usePlatform({ services: ["restream"], clock });

/** A registered worker that ends every session it opens, so the next publish finds none open. */
async function publisher() {
  const worker = await FakeWorker.of(t);
  await worker.register();
  return {
    worker,
    /** Whether a publish with `key` is granted (the session it opens ended at once), or why not. */
    async publish(key: string): Promise<string> {
      const grant = await worker.authorize(key);
      if (!grant.granted) return grant.reason;
      await worker.ended(grant.sessionId);
      return "granted";
    },
  };
}

describe("ingest keys", () => {
  it("stores an ingest key only as its SHA-256: no row of any restream table holds it in plain", async () => {
    const owner = await streamer(t);
    const { id, key } = await owner.stream();
    const rotated = (await owner.call("POST", `/streams/${id}/keys/rotate`, { grace_seconds: 600 })).body;
    const em = t.platform.contexts.get("restream")!.orm.em;
    const schema = String(em.config.get("schema"));
    const connection = em.getConnection();
    const hashes = await connection.execute<{ key_hash: string; hint: string }[]>(
      `select key_hash, hint from "${schema}".ingest_keys where stream_id = ?`,
      [id],
    );
    expect(hashes).toHaveLength(2);
    expect(hashes).toEqual(
      expect.arrayContaining([
        { key_hash: sha256(key), hint: key.slice(-4) },
        { key_hash: sha256(rotated.ingest_key), hint: rotated.ingest_key.slice(-4) },
      ]),
    );
    const tables = await connection.execute<{ table_name: string }[]>(
      `select table_name from information_schema.tables where table_schema = ? and table_type = 'BASE TABLE'`,
      [schema],
    );
    expect(tables.map((table) => table.table_name)).toContain("ingest_keys");
    for (const { table_name } of tables)
      for (const secret of [key, rotated.ingest_key]) {
        const [found] = await connection.execute<{ count: number }[]>(
          `select count(*)::int as count from "${schema}"."${table_name}" t where t::text like ?`,
          [`%${secret}%`],
        );
        expect(found!.count, table_name).toBe(0);
      }
  });

  it("rotates with a grace period: both keys work during it, only the new one after; the new key is answered once", async () => {
    const owner = await streamer(t);
    const { id, key: old } = await owner.stream();
    const { publish } = await publisher();
    expect(await publish(old)).toBe("granted");

    const rotated = await owner.call("POST", `/streams/${id}/keys/rotate`, { grace_seconds: 600 });
    expect(rotated.status).toBe(200);
    const fresh: string = rotated.body.ingest_key;
    expect(fresh).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(fresh).not.toBe(old);
    const graceEnds = new Date(clock.now().getTime() + 600_000).toISOString();
    expect(rotated.body.previous_key).toMatchObject({ hint: old.slice(-4), status: "grace" });
    expect(new Date(rotated.body.previous_key.grace_ends_at).toISOString()).toBe(graceEnds);
    expect(rotated.body.stream.key).toMatchObject({ hint: fresh.slice(-4), status: "active" });
    expect(rotated.body.ended_session_ids ?? []).toEqual([]);

    expect(await publish(old)).toBe("granted");
    expect(await publish(fresh)).toBe("granted");
    const keys = await owner.call("GET", `/streams/${id}/keys`);
    expect(keys.body.keys.map((k: { status: string }) => k.status)).toEqual(["active", "grace"]);
    expect(JSON.stringify(keys.body)).not.toContain(old);
    expect(JSON.stringify(keys.body)).not.toContain(fresh);

    clock.advance(600_000);
    expect(await publish(old)).toBe("key_revoked");
    expect(await publish(fresh)).toBe("granted");
    const after = await owner.call("GET", `/streams/${id}/keys`);
    expect(after.body.keys[1]).toMatchObject({ status: "revoked" });
    expect(new Date(after.body.keys[1].revoked_at).toISOString()).toBe(graceEnds);
  });

  it("rotates at once (grace 0): the old key fails the very next publish", async () => {
    const owner = await streamer(t);
    const { id, key: old } = await owner.stream();
    const { publish } = await publisher();
    const rotated = await owner.call("POST", `/streams/${id}/keys/rotate`, {});
    expect(rotated.body.previous_key).toMatchObject({ status: "revoked" });
    expect(await publish(old)).toBe("key_revoked");
    expect(await publish(rotated.body.ingest_key)).toBe("granted");
    expect(await publish("never-issued-key")).toBe("unknown_key");
  });

  it("a second immediate rotation also stops a key still in its grace", async () => {
    const owner = await streamer(t);
    const { id, key: first } = await owner.stream();
    const { publish } = await publisher();
    const graced = await owner.call("POST", `/streams/${id}/keys/rotate`, { grace_seconds: 3600 });
    expect(await publish(first)).toBe("granted");
    await owner.call("POST", `/streams/${id}/keys/rotate`, { grace_seconds: 0 });
    expect(await publish(first)).toBe("key_revoked");
    expect(await publish(graced.body.ingest_key)).toBe("key_revoked");
  });

  it("end_sessions ends the session opened with the old key (key_rotated) and tells its worker to cut the encoder", async () => {
    const owner = await streamer(t);
    const { id, key } = await owner.stream();
    const worker = await FakeWorker.of(t);
    await worker.register();
    const watch = worker.watch();
    try {
      const grant = await worker.authorize(key);
      await worker.live(grant.sessionId);
      const rotated = await owner.call("POST", `/streams/${id}/keys/rotate`, { grace_seconds: 60, end_sessions: true });
      expect(rotated.body.ended_session_ids).toEqual([grant.sessionId]);
      const session = await owner.call("GET", `/sessions/${grant.sessionId}`);
      expect(session.body.session).toMatchObject({ state: "ended", end_reason: "key_rotated" });
      await until(() => watch.received.length === 1);
      expect(watch.received[0]).toMatchObject({
        kind: "end_session",
        sessionId: grant.sessionId,
        reason: "key_rotated",
      });
      // The worker's own report of the end changes nothing more.
      expect((await worker.ended(grant.sessionId, "key_rotated")).applied).toBe(false);
    } finally {
      watch.stop();
    }
  });

  it("without end_sessions the open session runs on; the rotation's event carries the hint, never a key", async () => {
    const owner = await streamer(t);
    const { id, key } = await owner.stream();
    const worker = await FakeWorker.of(t);
    await worker.register();
    const grant = await worker.authorize(key);
    const rotated = await owner.call("POST", `/streams/${id}/keys/rotate`, {});
    expect(rotated.body.ended_session_ids ?? []).toEqual([]);
    expect((await owner.call("GET", `/sessions/${grant.sessionId}`)).body.session.state).toBe("starting");
    const events = await outboxEvents(t, "restream", id);
    const rotation = events.filter((e) => e.subject === "restream.key.rotated");
    expect(rotation).toHaveLength(1);
    expect(rotation[0]!.payload).toContain(rotated.body.ingest_key.slice(-4));
    for (const event of events) {
      expect(event.payload).not.toContain(key);
      expect(event.payload).not.toContain(rotated.body.ingest_key);
    }
  });

  it("refuses a grace over a day (400 naming grace_seconds)", async () => {
    const owner = await streamer(t);
    const { id } = await owner.stream();
    const answer = await owner.call("POST", `/streams/${id}/keys/rotate`, { grace_seconds: 86_401 });
    expect(answer.body).toMatchObject({ status: 400, code: "request.invalid", field: "grace_seconds" });
  });
});
