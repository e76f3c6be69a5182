import { beforeAll, describe, expect, it } from "vitest";
import { qualified } from "../../services/kit/db/orm.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { outboxEvents } from "../support/outbox.js";
import { holdRows } from "../support/row-lock.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { ALL_BLOG, newBlog, newPost, person, webCaller } from "./support.js";
import { DATABASE_SERVER, itWith } from "../support/skips.js";

// Who may apply a schedule: the right to schedule is the right to publish (authors their own posts, editors and
// owners every post), held by the person who scheduled it until the schedule is applied.
const clock = new ManualClock(new Date());
const t = usePlatform({ services: ["blog"], clock, env: { PF_BLOG_SCHEDULER_EVERY_MS: "50" } });
let web = "";
beforeAll(async () => {
  web = await t.token({ kind: "service", svc: "web", caps: ALL_BLOG });
});
const call = webCaller(t, () => web);
const table = (name: string) => qualified(t.platform.contexts.get("blog")!.orm.em, name);

async function schedules(postId: string): Promise<{ id: string; state: string; failure: string }[]> {
  const em = t.platform.contexts.get("blog")!.orm.em.fork();
  return em
    .getConnection()
    .execute(`select id, state, failure from ${table("schedules")} where post_id = ? order by created_at, id`, [
      postId,
    ]);
}

/** A blog whose owner made `who` a member with `role`. */
async function blogWith(role: string) {
  const blog = await newBlog(call);
  const who = person(role.slice(0, 3));
  const added = await call("PUT", `/api/v1/blogs/${blog.handle}/members/${who}`, blog.owner, { role });
  expect(added.status).toBe(200);
  return { ...blog, who };
}

const schedule = (postId: string, who: string, inMs: number) =>
  call("POST", `/api/v1/posts/${postId}/schedule`, who, {
    action: "publish",
    at: new Date(clock.now().getTime() + inMs).toISOString(),
  });

/** Holds a schedule's row from another session: a schedule of the same post and action waits inside its transaction. */
const holdSchedule = (id: string) =>
  holdRows(t.platform.databaseUrl, `select 1 from ${table("schedules")} where id = $1 for update`, [id]);

describe("schedules and the members who made them", () => {
  it("cancels a demoted editor's schedules of posts not theirs, and a removed member's, in the membership change", async () => {
    const { owner, handle, who: editor } = await blogWith("editor");
    const own = await newPost(call, handle, editor);
    const others = await newPost(call, handle, owner);
    const kept = await schedule(own.id, editor, 60_000);
    const lost = await schedule(others.id, editor, 60_000);
    expect([kept.status, lost.status]).toEqual([201, 201]);

    // An author publishes only their own posts: the schedule of the owner's post goes with the demotion.
    expect((await call("PUT", `/api/v1/blogs/${handle}/members/${editor}`, owner, { role: "author" })).status).toBe(
      200,
    );
    expect(await schedules(others.id)).toEqual([{ id: lost.body.schedule.id, state: "cancelled", failure: "" }]);
    expect(await schedules(own.id)).toEqual([{ id: kept.body.schedule.id, state: "pending", failure: "" }]);

    expect((await call("DELETE", `/api/v1/blogs/${handle}/members/${editor}`, owner)).status).toBe(200);
    expect(await schedules(own.id)).toEqual([{ id: kept.body.schedule.id, state: "cancelled", failure: "" }]);

    // Nothing is published when their time comes.
    clock.advance(61_000);
    const due = await schedule(others.id, owner, 1_000);
    clock.advance(2_000);
    await until(async () => (await t.http("GET", `/blog/api/v1/posts/${others.id}`)).status === 200);
    expect((await t.http("GET", `/blog/api/v1/posts/${own.id}`)).status).toBe(404);
    expect((await schedules(others.id)).map((row) => row.state)).toEqual(["cancelled", "applied"]);
    expect(due.status).toBe(201);
  });

  // Row locks across sessions need a database server: the embedded one is a single session.
  itWith(
    DATABASE_SERVER,
    "fails once, without publishing, a schedule whose person was removed while it was being made",
    async () => {
      const { owner, handle, who: editor } = await blogWith("editor");
      const post = await newPost(call, handle, owner);
      const first = await schedule(post.id, owner, 60_000);
      // The editor's schedule passes its role check, then waits (it replaces the owner's pending one, held here) while
      // the editor's removal commits: the removal had nothing of theirs to cancel yet.
      const held = await holdSchedule(first.body.schedule.id);
      let waiting: ReturnType<typeof schedule> | undefined;
      try {
        waiting = schedule(post.id, editor, 120_000);
        await until(async () => (await held.waiting()) > 0);
        expect((await call("DELETE", `/api/v1/blogs/${handle}/members/${editor}`, owner)).status).toBe(200);
      } finally {
        await held.release();
      }
      const scheduled = await waiting;
      expect(scheduled.status).toBe(201);
      const id = scheduled.body.schedule.id as string;

      clock.advance(121_000);
      await until(async () => (await schedules(post.id)).find((row) => row.id === id)?.state === "failed");
      expect((await schedules(post.id)).find((row) => row.id === id)).toEqual({
        id,
        state: "failed",
        failure: "blog.member_required",
      });
      expect((await t.http("GET", `/blog/api/v1/posts/${post.id}`)).status).toBe(404);
      expect((await outboxEvents(t, "blog", id)).map((event) => event.subject)).toEqual(["blog.schedule.failed"]);
    },
  );
});
