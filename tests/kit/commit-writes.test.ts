import { describe, expect, it } from "vitest";
import { NotificationPushedSchema } from "../../gen/pf/network/v1/events_pb.js";
import { lockedById } from "../../services/kit/db/locked.js";
import { sql } from "../../services/kit/db/sql.js";
import { recordEvent } from "../../services/kit/events/outbox.js";
import { JobRow } from "../../services/run/db/entities.js";
import { usePlatform } from "../support/platform.js";
import { DATABASE_SERVER, itWith } from "../support/skips.js";
import { until } from "../support/until.js";

const t = usePlatform({ services: ["run"] });
const ctx = () => t.platform.contexts.get("run")!;
const marker = `cw-${Date.now().toString(36)}-`;

/** This file's outbox rows of `title`s, in the order of their ids. */
async function outboxTitles(): Promise<string[]> {
  const rows = await sql<{ payload: string }>(
    ctx().orm.em.fork(),
    "select payload from {outbox} where payload like ? order by id",
    [`%${marker}%`],
  );
  return rows.map((row) =>
    (JSON.parse(row.payload) as { notification: { title: string } }).notification.title.slice(marker.length),
  );
}

const pushed = (title: string) => ({
  recipientId: "usr_cw",
  notification: { id: `ntf_${title}`, title: marker + title },
});

async function insertJob(id: string): Promise<void> {
  await ctx().transaction((em) =>
    sql(
      em,
      `insert into {jobs} (id, project_id, submitted_by, subject, state, frame, submitted_at)
       values (?, 'prj_cw', 'app:cw', '', 'queued', '{"class":"function"}', now())`,
      [id],
    ),
  );
}

describe("writes a transaction leaves for its commit", () => {
  it("writes a transaction's events as it commits, in the order recorded, and none of one rolled back", async () => {
    // run's schema has the kit's outbox; the event is any declared one (the relay is not what is tested here).
    const record = (em: Parameters<typeof recordEvent>[0], title: string) =>
      recordEvent(em, "network.notification.pushed", NotificationPushedSchema, pushed(title));
    await ctx().transaction(async (em) => {
      await record(em, "a");
      await record(em, "b");
      // Not yet written: they go together at the commit.
      expect(await sql(em, "select 1 from {outbox} where payload like ?", [`%${marker}%`])).toEqual([]);
      await record(em, "c");
    });
    expect(await outboxTitles()).toEqual(["a", "b", "c"]);
    await expect(
      ctx().transaction(async (em) => {
        await record(em, "lost");
        throw new Error("the change failed after its event");
      }),
    ).rejects.toThrow("the change failed");
    expect(await outboxTitles()).toEqual(["a", "b", "c"]);
    // Outside a transaction of the kit's there is no commit to wait for: written at once.
    await record(ctx().orm.em.fork(), "d");
    expect(await outboxTitles()).toEqual(["a", "b", "c", "d"]);
  });
});

describe("lockedById", () => {
  it("answers the row as a managed entity whose changes the transaction writes, and null for none", async () => {
    const id = `job_cw${Date.now().toString(36)}a`;
    await insertJob(id);
    await ctx().transaction(async (em) => {
      const job = (await lockedById(em, JobRow, id))!;
      expect(job).toMatchObject({ id, state: "queued", frame: { class: "function" }, lastSeq: 0 });
      expect(job.submittedAt).toBeInstanceOf(Date);
      job.state = "placed";
      job.lastSeq = 2;
      expect(await lockedById(em, JobRow, `${id}-none`)).toBeNull();
    });
    const [row] = await sql<{ state: string; last_seq: number }>(
      ctx().orm.em.fork(),
      "select state, last_seq from {jobs} where id = ?",
      [id],
    );
    expect(row).toEqual({ state: "placed", last_seq: 2 });
  });

  it("keeps an entity the transaction already holds as it is, its changes not read over", async () => {
    const id = `job_cw${Date.now().toString(36)}b`;
    await insertJob(id);
    await ctx().transaction(async (em) => {
      const first = (await lockedById(em, JobRow, id))!;
      first.state = "running";
      const again = await lockedById(em, JobRow, id);
      expect(again).toBe(first);
      expect(again!.state).toBe("running");
    });
  });

  // The embedded database is one session: a second transaction waits for the first whole, never on a row.
  itWith(DATABASE_SERVER, "holds the row's lock to the end of the transaction", async () => {
    const id = `job_cw${Date.now().toString(36)}c`;
    await insertJob(id);
    const order: string[] = [];
    let locked!: () => void;
    const holding = new Promise<void>((resolve) => (locked = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const first = ctx().transaction(async (em) => {
      await lockedById(em, JobRow, id);
      locked();
      await released;
      order.push("first ends");
    });
    await holding;
    const second = ctx().transaction(async (em) => {
      await lockedById(em, JobRow, id);
      order.push("second locked");
    });
    // The second's statement waits on the row (or, unlocked, it is through already).
    await until(async () => {
      if (order.length > 0) return true;
      const [row] = await sql<{ waiting: number }>(
        ctx().orm.em.fork(),
        "select count(*)::int as waiting from pg_stat_activity where wait_event_type = 'Lock' and query like ?",
        [`%${id}%`],
      );
      return row.waiting > 0;
    });
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(["first ends", "second locked"]);
  });
});
