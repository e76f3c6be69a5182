import { beforeAll, describe, expect, it } from "vitest";
import { qualified } from "../../services/kit/db/orm.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { untilPassesAfter } from "../support/lease-tries.js";
import { aiRun } from "../support/ai-runs.js";
import { outboxEvents } from "../support/outbox.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { ALL_BLOG, fresh, newBlog, newPost, person, webCaller } from "./support.js";

const clock = new ManualClock(new Date());
const t = usePlatform({ services: ["blog", "ai"], clock, env: { PF_BLOG_SCHEDULER_EVERY_MS: "50" } });
const blog = () => t.platform.contexts.get("blog")!;
let web = "";
beforeAll(async () => {
  web = await t.token({ kind: "service", svc: "web", caps: ALL_BLOG });
});
const call = webCaller(t, () => web);
const ai = { "x-pf-origin": "ai" };
/** AI output's workflow: a real run by the web service (the sender) of the AI service's stub provider. */
const aiWorkflow = async () => {
  const token = await t.token({ kind: "service", svc: "web", caps: ["ai.run.create"] });
  return { id: "blog.draft_post", run_id: (await aiRun(t, { token, workflow: "blog.draft_post" })).runId };
};
const sql = async <T>(text: string, params: unknown[] = []) => {
  const em = t.platform.contexts.get("blog")!.orm.em.fork();
  return em.getConnection().execute<T[]>(
    text.replace(/\{(\w+)\}/g, (_m, table: string) => qualified(em, table)),
    params,
  );
};

describe("blogs and members", () => {
  it("gets or creates the acting member's blog: 201, then 200 with the same blog; a taken handle is 409", async () => {
    const owner = person();
    const handle = fresh("h");
    const first = await call("POST", "/api/v1/blogs", owner, { handle, title: "T" });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ created: true, blog: { handle, created_for: owner, theme: "vibe" } });
    const again = await call("POST", "/api/v1/blogs", owner, { handle: fresh("x") });
    expect(again.status).toBe(200);
    expect(again.body.blog.id).toBe(first.body.blog.id);
    const taken = await call("POST", "/api/v1/blogs", person(), { handle });
    expect(taken.body).toMatchObject({ status: 409, code: "blog.handle_taken" });
    const guest = await call("POST", "/api/v1/blogs", "gst_abc", { handle: fresh("g") });
    expect(guest.status).toBe(403);
  });

  it("keeps at least one owner even when two owners demote each other at once", async () => {
    const { owner, handle } = await newBlog(call);
    const second = person("o2");
    expect((await call("PUT", `/api/v1/blogs/${handle}/members/${second}`, owner, { role: "owner" })).status).toBe(200);
    const [a, b] = await Promise.all([
      call("PUT", `/api/v1/blogs/${handle}/members/${second}`, owner, { role: "editor" }),
      call("PUT", `/api/v1/blogs/${handle}/members/${owner}`, second, { role: "editor" }),
    ]);
    // One wins; the other is no longer an owner (403) or would leave none (409).
    expect([a.status, b.status].filter((s) => s === 200)).toHaveLength(1);
    expect(["blog.owner_required", "blog.last_owner"]).toContain([a, b].find((x) => x.status !== 200)!.body.code);
    const owners = await sql<{ n: string }>(
      `select count(*) as n from {members} m join {blogs} b on b.id = m.blog_id where b.handle = ? and role = 'owner'`,
      [handle],
    );
    expect(Number(owners[0]!.n)).toBe(1);
    const last = [a, b].find((x) => x.status === 200) === a ? owner : second;
    expect((await call("DELETE", `/api/v1/blogs/${handle}/members/${last}`, last)).body.code).toBe("blog.last_owner");
    // Two owners stepping down at once: exactly one may, the other is the last owner.
    const third = person("o3");
    await call("PUT", `/api/v1/blogs/${handle}/members/${third}`, last, { role: "owner" });
    const both = await Promise.all(
      [last, third].map((who) => call("PUT", `/api/v1/blogs/${handle}/members/${who}`, who, { role: "author" })),
    );
    expect(both.map((x) => x.status).sort()).toEqual([200, 409]);
    expect(both.find((x) => x.status === 409)!.body.code).toBe("blog.last_owner");
  });

  it("lets only owners configure, theme and manage; themes are presets only", async () => {
    const { owner, handle } = await newBlog(call);
    const editor = person("ed");
    await call("PUT", `/api/v1/blogs/${handle}/members/${editor}`, owner, { role: "editor" });
    expect((await call("PUT", `/api/v1/blogs/${handle}/theme`, editor, { theme: "nord" })).body.code).toBe(
      "blog.owner_required",
    );
    expect((await call("PATCH", `/api/v1/blogs/${handle}`, editor, { title: "x" })).body.code).toBe(
      "blog.owner_required",
    );
    expect((await call("GET", `/api/v1/blogs/${handle}/members`, editor)).body.code).toBe("blog.owner_required");
    const themed = await call("PUT", `/api/v1/blogs/${handle}/theme`, owner, { theme: "high-contrast" });
    expect(themed.body.blog.theme).toBe("high-contrast");
    const bad = await call("PUT", `/api/v1/blogs/${handle}/theme`, owner, { theme: "custom" });
    expect(bad.body).toMatchObject({ status: 400, field: "theme" });
    const css = await call("PUT", `/api/v1/blogs/${handle}/theme`, owner, { theme: "nord", css: "body{}" });
    expect(css.status).toBe(400);
    const configured = await call("PATCH", `/api/v1/blogs/${handle}`, owner, { feed: { item_count: 5, atom: false } });
    expect(configured.body.blog.feed).toMatchObject({ item_count: 5, atom: false, rss: true });
    // Staff act only on the official blog (none here).
    expect((await call("PATCH", `/api/v1/blogs/${handle}`, undefined, { title: "x" })).body.code).toBe(
      "blog.owner_required",
    );
  });
});

describe("revisions", () => {
  it("requires expected_revision (428), refuses a stale one (412), and lets exactly one of two concurrent saves win", async () => {
    const { owner, handle } = await newBlog(call);
    const post = await newPost(call, handle, owner);
    expect(post).toMatchObject({ state: "draft", current_revision: 1, revision: { n: 1, title: "Hello world" } });
    const path = `/api/v1/posts/${post.id}`;
    expect((await call("PATCH", path, owner, { body: "x" })).body).toMatchObject({
      status: 428,
      code: "revision.required",
    });
    const saves = await Promise.all(
      ["one", "two", "three"].map((body) => call("PATCH", path, owner, { expected_revision: 1, body })),
    );
    expect(saves.map((s) => s.status).sort()).toEqual([200, 412, 412]);
    expect(saves.find((s) => s.status === 412)!.body).toMatchObject({ code: "revision.conflict", revision: "2" });
    const ifMatch = await call("PATCH", path, owner, { title: "New" }, { "if-match": '"2"' });
    expect(ifMatch.body.post.current_revision).toBe(3);
    // A revert is a new revision with the old content.
    const reverted = await call("POST", `${path}/revert`, owner, { expected_revision: 3, revision: 1 });
    expect(reverted.body.post.revision).toMatchObject({ n: 4, title: "Hello world", body: "First.", based_on: 1 });
    const list = await call("GET", `${path}/revisions`, owner);
    expect(list.body.revisions.map((r: { n: number }) => r.n)).toEqual([4, 3, 2, 1]);
    expect((await call("GET", `${path}/revisions/2`, owner)).body.revision.n).toBe(2);
    const diff = await call("GET", `${path}/diff?from=1&to=3`, owner);
    expect(diff.body.diff.fields.map((f: { field: string; changed: boolean }) => [f.field, f.changed])).toEqual([
      ["title", true],
      ["summary", false],
      ["body", true],
    ]);
    // Revisions are never updated or deleted.
    await expect(sql(`update {post_revisions} set body = 'x' where post_id = ?`, [post.id])).rejects.toThrow(
      /immutable/,
    );
    await expect(sql(`delete from {post_revisions} where post_id = ?`, [post.id])).rejects.toThrow(/immutable/);
  });

  it("lets authors edit their own posts only; editors and owners edit every post", async () => {
    const { owner, handle } = await newBlog(call);
    const [author, other] = [person("au"), person("au2")];
    for (const who of [author, other])
      await call("PUT", `/api/v1/blogs/${handle}/members/${who}`, owner, { role: "author" });
    const post = await newPost(call, handle, author);
    const edit = (who: string, n: number) =>
      call("PATCH", `/api/v1/posts/${post.id}`, who, { expected_revision: n, body: who });
    expect((await edit(other, 1)).body.code).toBe("blog.not_author");
    expect((await edit(person("stranger"), 1)).body.code).toBe("blog.member_required");
    expect((await edit(author, 1)).status).toBe(200);
    expect((await edit(owner, 2)).status).toBe(200);
  });
});

describe("the AI gate", () => {
  it("makes an AI draft, never the person's, noindex, and refuses its publish until a person approves that revision", async () => {
    const { owner, handle } = await newBlog(call);
    const workflow = await aiWorkflow();
    expect((await call("POST", `/api/v1/blogs/${handle}/posts`, owner, { title: "AI" }, ai)).body.code).toBe(
      "post.workflow_required",
    );
    const post = await newPost(call, handle, owner, { authorship: { workflow } }, ai);
    expect(post.authorship).toMatchObject({
      ai: { workflow: "blog.draft_post", run_id: workflow.run_id, stub_provider: true, service: "svc:web" },
    });
    expect(JSON.stringify(post.authorship)).not.toContain(owner);
    expect(post).toMatchObject({ noindex: true, revision: { review_required: true } });
    const publish = () => call("POST", `/api/v1/posts/${post.id}/publish`, owner, {});
    expect((await publish()).body).toMatchObject({ status: 409, code: "post.review_required" });
    // A person's edit on top of the unreviewed AI revision is AI-assisted: still gated.
    const edited = await call("PATCH", `/api/v1/posts/${post.id}`, owner, { expected_revision: 1, body: "Mine now" });
    expect(edited.body.post.revision.review_required).toBe(true);
    expect((await publish()).body.code).toBe("post.review_required");
    // AI output never approves.
    const aiReview = await call(
      "PATCH",
      `/api/v1/posts/${post.id}`,
      owner,
      { review: { revision: 2, verdict: "approve" } },
      ai,
    );
    expect(aiReview.status).toBe(403);
    // Approving revision 1 does not approve revision 2.
    await call("PATCH", `/api/v1/posts/${post.id}`, owner, { review: { revision: 1, verdict: "approve" } });
    expect((await publish()).body.code).toBe("post.review_required");
    const reviewed = await call("PATCH", `/api/v1/posts/${post.id}`, owner, {
      review: { revision: 2, verdict: "approve" },
    });
    expect(reviewed.body.post.revision.approval).toMatchObject({ approver: owner });
    const published = await publish();
    expect(published.body.post).toMatchObject({ state: "published", published_revision: 2, noindex: true });
    expect((await publish()).body.unchanged).toBe(true);
  });
});

describe("what readers see", () => {
  it("answers published public posts anonymously, 404 for drafts and unpublished, 410 when deleted, 301 for old slugs", async () => {
    const { owner, handle } = await newBlog(call);
    const post = await newPost(call, handle, owner, { title: "First title" });
    const anon = () => t.http("GET", `/blog/api/v1/posts/${post.id}`);
    expect((await anon()).body).toMatchObject({ status: 404, code: "post.not_found" });
    await call("POST", `/api/v1/posts/${post.id}/publish`, owner, {});
    expect((await anon()).status).toBe(200);
    // Readers see the published revision; a later save goes live only on publish.
    const saved = await call("PATCH", `/api/v1/posts/${post.id}`, owner, {
      expected_revision: 1,
      body: "Unpublished edit",
      slug: "second",
    });
    expect(saved.body.post, JSON.stringify(saved.body)).toMatchObject({ slug: "second", current_revision: 2 });
    expect((await anon()).body.post.revision.body).toBe("First.");
    const moved = await fetch(`${t.gatewayUrl}/blog/api/v1/blogs/${handle}/posts/by-slug/first-title`, {
      redirect: "manual",
    });
    expect(moved.status).toBe(301);
    expect(moved.headers.get("location")).toBe("second");
    expect((await t.http("GET", `/blog/api/v1/blogs/${handle}/posts/by-slug/second`)).body.post.id).toBe(post.id);
    await call("POST", `/api/v1/posts/${post.id}/unpublish`, owner);
    expect((await anon()).status).toBe(404);
    expect((await call("GET", `/api/v1/posts/${post.id}`, owner)).body.post.state).toBe("unpublished");
    const deleted = await call("DELETE", `/api/v1/posts/${post.id}`, owner);
    expect(deleted.status).toBe(200);
    expect((await anon()).body).toMatchObject({ status: 410, code: "post.deleted" });
    expect((await call("GET", `/api/v1/posts/${post.id}`, owner)).status).toBe(410);
    expect(
      (await call("PATCH", `/api/v1/posts/${post.id}`, owner, { expected_revision: 2, body: "x" })).body.code,
    ).toBe("post.deleted");
    // Revisions are kept.
    expect((await sql(`select n from {post_revisions} where post_id = ?`, [post.id])).length).toBe(2);
  });

  it("tombstones the search document on unpublish and on delete", async () => {
    const { owner, handle } = await newBlog(call);
    const doc = async (id: string) =>
      (
        await sql<{ deleted: boolean }>(
          `select document is null as deleted from {search_documents} where type = 'post' and id = ?`,
          [id],
        )
      )[0];
    for (const end of ["unpublish", "delete"]) {
      const post = await newPost(call, handle, owner);
      await call("POST", `/api/v1/posts/${post.id}/publish`, owner, {});
      expect(await doc(post.id)).toEqual({ deleted: false });
      if (end === "unpublish") await call("POST", `/api/v1/posts/${post.id}/unpublish`, owner);
      else await call("DELETE", `/api/v1/posts/${post.id}`, owner);
      expect(await doc(post.id)).toEqual({ deleted: true });
    }
  });

  it("puts exactly the public, published, listed posts in the RSS, Atom and JSON feeds", async () => {
    const { owner, handle } = await newBlog(call);
    const make = async (title: string, extra: Record<string, unknown>, publish = true) => {
      const post = await newPost(call, handle, owner, { title, ...extra });
      if (publish) await call("POST", `/api/v1/posts/${post.id}/publish`, owner, {});
      return post;
    };
    const shown = await make("Shown post", {});
    await make("Members post", { visibility: "members-only" });
    await make("Private post", { visibility: "private" });
    await make("Unlisted post", { listed: false });
    await make("Draft post", {}, false);
    const gone = await make("Unpublished post", {});
    await call("POST", `/api/v1/posts/${gone.id}/unpublish`, owner);
    for (const file of ["rss.xml", "atom.xml", "feed.json"]) {
      const answer = await fetch(`${t.gatewayUrl}/blog/feeds/${handle}/${file}`);
      expect(answer.status, file).toBe(200);
      const text = await answer.text();
      expect(text, file).toContain("Shown post");
      for (const hidden of ["Members post", "Private post", "Unlisted post", "Draft post", "Unpublished post"])
        expect(text, `${file} ${hidden}`).not.toContain(hidden);
      const etag = answer.headers.get("etag")!;
      expect(
        (await fetch(`${t.gatewayUrl}/blog/feeds/${handle}/${file}`, { headers: { "if-none-match": etag } })).status,
      ).toBe(304);
    }
    expect((await fetch(`${t.gatewayUrl}/blog/feeds/${handle}/rss.xml`)).headers.get("content-type")).toContain(
      "application/rss+xml",
    );
    const route = await fetch(`${t.gatewayUrl}/blog/api/v1/blogs/${handle}/feed`);
    const json = (await route.json()) as { version: string; items: { id: string }[] };
    expect(json.version).toBe("https://jsonfeed.org/version/1.1");
    expect(json.items.map((item) => item.id)).toEqual([shown.id]);
    await call("PATCH", `/api/v1/blogs/${handle}`, owner, { feed: { atom: false } });
    expect((await t.http("GET", `/blog/feeds/${handle}/atom.xml`)).body).toMatchObject({
      status: 404,
      code: "feed.disabled",
    });
    const listing = await t.http("GET", `/blog/api/v1/blogs/${handle}/posts`);
    expect(listing.body.posts.map((p: { id: string }) => p.id)).toEqual([shown.id]);
    expect((await call("GET", `/api/v1/blogs/${handle}/posts?all=1`, owner)).body.posts).toHaveLength(6);
    expect((await call("GET", `/api/v1/blogs/${handle}/posts?all=1`, person())).body.code).toBe("blog.member_required");
  });
});

describe("the scheduler", () => {
  it("refuses past times, is idempotent per (post, action, time, revision), and publishes when due", async () => {
    const { owner, handle } = await newBlog(call);
    const post = await newPost(call, handle, owner);
    const path = `/api/v1/posts/${post.id}/schedule`;
    const past = await call("POST", path, owner, {
      action: "publish",
      at: new Date(clock.now().getTime() - 1000).toISOString(),
    });
    expect(past.body).toMatchObject({ status: 422, code: "schedule.not_future" });
    const at = new Date(clock.now().getTime() + 60_000).toISOString();
    const first = await call("POST", path, owner, { action: "publish", at });
    expect(first.status).toBe(201);
    const again = await call("POST", path, owner, { action: "publish", at });
    expect(again.status).toBe(200);
    expect(again.body.schedule.id).toBe(first.body.schedule.id);
    expect((await call("GET", `/api/v1/posts/${post.id}`, owner)).body.post.state).toBe("scheduled");
    clock.advance(61_000);
    await until(async () => (await t.http("GET", `/blog/api/v1/posts/${post.id}`)).status === 200);
    const events = await outboxEvents(t, "blog", first.body.schedule.id);
    expect(events.map((e) => e.subject)).toEqual(["blog.schedule.applied"]);
  });

  it("fails a scheduled publish of an unreviewed AI revision once, emitting blog.schedule.failed exactly once", async () => {
    const { owner, handle } = await newBlog(call);
    const post = await newPost(call, handle, owner, { authorship: { workflow: await aiWorkflow() } }, ai);
    const at = new Date(clock.now().getTime() + 60_000).toISOString();
    const scheduled = await call("POST", `/api/v1/posts/${post.id}/schedule`, owner, { action: "publish", at });
    const id = scheduled.body.schedule.id;
    clock.advance(61_000);
    const state = async () =>
      (await sql<{ state: string; failure: string }>(`select state, failure from {schedules} where id = ?`, [id]))[0]!;
    await until(async () => (await state()).state === "failed");
    expect(await state()).toEqual({ state: "failed", failure: "post.review_required" });
    clock.advance(61_000);
    await untilPassesAfter(blog(), "blog.scheduler");
    expect((await outboxEvents(t, "blog", id)).map((e) => e.subject)).toEqual(["blog.schedule.failed"]);
    expect((await t.http("GET", `/blog/api/v1/posts/${post.id}`)).status).toBe(404);
  });

  it("publishes once when the pass fails between the publish and its event: nothing half-done, then one publish", async () => {
    const { owner, handle } = await newBlog(call);
    const post = await newPost(call, handle, owner);
    const at = new Date(clock.now().getTime() + 60_000).toISOString();
    const id = (await call("POST", `/api/v1/posts/${post.id}/schedule`, owner, { action: "publish", at })).body.schedule
      .id as string;
    // The database refuses the schedule's event, as a crash after the publish's writes and before its event would
    // end that transaction.
    await sql(`create function {refuse_applied}() returns trigger as $$ begin
        if new.subject = 'blog.schedule.applied' then raise exception 'injected failure'; end if; return new; end;
        $$ language plpgsql`);
    await sql(
      `create trigger refuse_applied before insert on {outbox} for each row execute function {refuse_applied}()`,
    );
    try {
      clock.advance(61_000);
      // Several passes fail in turn.
      await untilPassesAfter(blog(), "blog.scheduler", 3);
      expect((await t.http("GET", `/blog/api/v1/posts/${post.id}`)).status).toBe(404);
      expect((await call("GET", `/api/v1/posts/${post.id}`, owner)).body.post.state).toBe("scheduled");
      expect(await sql(`select state from {schedules} where id = ?`, [id])).toEqual([{ state: "pending" }]);
      expect(await outboxEvents(t, "blog", post.id)).toEqual(
        expect.not.arrayContaining([expect.objectContaining({ subject: "blog.post.published" })]),
      );
    } finally {
      await sql(`drop trigger refuse_applied on {outbox}`);
      await sql(`drop function {refuse_applied}()`);
    }
    await until(async () => (await t.http("GET", `/blog/api/v1/posts/${post.id}`)).status === 200);
    await untilPassesAfter(blog(), "blog.scheduler");
    const subjects = (await outboxEvents(t, "blog", post.id)).map((event) => event.subject);
    expect(subjects.filter((subject) => subject === "blog.post.published")).toHaveLength(1);
    expect(subjects.filter((subject) => subject === "blog.schedule.applied")).toHaveLength(1);
    expect(await sql(`select state from {schedules} where id = ?`, [id])).toEqual([{ state: "applied" }]);
  });

  it("cancels pending schedules on DELETE /schedule and on delete", async () => {
    const { owner, handle } = await newBlog(call);
    const post = await newPost(call, handle, owner);
    const at = new Date(clock.now().getTime() + 60_000).toISOString();
    await call("POST", `/api/v1/posts/${post.id}/schedule`, owner, { action: "publish", at });
    const cancelled = await call("DELETE", `/api/v1/posts/${post.id}/schedule`, owner);
    expect(cancelled.body.cancelled).toHaveLength(1);
    const later = new Date(clock.now().getTime() + 120_000).toISOString();
    await call("POST", `/api/v1/posts/${post.id}/schedule`, owner, { action: "publish", at: later });
    await call("DELETE", `/api/v1/posts/${post.id}`, owner);
    const rows = await sql<{ state: string }>(`select state from {schedules} where post_id = ?`, [post.id]);
    expect(rows.map((r) => r.state)).toEqual(["cancelled", "cancelled"]);
  });
});

describe("bad input", () => {
  it("answers 400 naming the field", async () => {
    const { owner, handle } = await newBlog(call);
    const post = await newPost(call, handle, owner);
    const cases: [string, string, unknown, string][] = [
      ["POST", `/api/v1/blogs/${handle}/posts`, { title: "" }, "title"],
      ["POST", `/api/v1/blogs/${handle}/posts`, { title: "x", visibility: "secret" }, "visibility"],
      ["POST", `/api/v1/blogs/${handle}/posts`, { title: "x", attachments: ["file.png"] }, "attachments"],
      ["POST", `/api/v1/blogs/${handle}/posts`, { title: "x".repeat(201) }, "title"],
      ["POST", `/api/v1/posts/${post.id}/attachments`, { expected_revision: 1, media_id: "nope" }, "media_id"],
      ["POST", `/api/v1/posts/${post.id}/schedule`, { action: "explode" }, "action"],
      ["POST", "/api/v1/blogs", { handle: "A B" }, "handle"],
    ];
    for (const [method, path, body, field] of cases) {
      const answer = await call(method, path, owner, body);
      expect(answer.body, `${path} ${field}`).toMatchObject({ status: 400, field });
    }
  });

  it("reports every rule the contract declares that a request breaks, each naming its field", async () => {
    const { owner, handle } = await newBlog(call);
    const fields = (answer: { body: { errors?: { field: string }[] } }) => answer.body.errors?.map((e) => e.field);
    const post = await call("POST", `/api/v1/blogs/${handle}/posts`, owner, {
      title: " ",
      summary: "s".repeat(501),
      visibility: "secret",
      taxonomy: Array.from({ length: 21 }, (_, i) => `t${i}`),
    });
    expect(post.body).toMatchObject({ status: 400, code: "request.invalid", field: "title" });
    expect(fields(post)).toEqual(["title", "summary", "visibility", "taxonomy"]);
    const blog = await call("PATCH", `/api/v1/blogs/${handle}`, owner, {
      title: "",
      language: "not a tag",
      feed: { item_count: 0 },
    });
    expect(fields(blog)).toEqual(["title", "language", "feed.item_count"]);
    const member = await call("PUT", `/api/v1/blogs/${handle}/members/someone`, owner, { role: "admin" });
    expect(fields(member)).toEqual(["subject", "role"]);
  });

  it("attaches and detaches media by id, each a new revision", async () => {
    const { owner, handle } = await newBlog(call);
    const post = await newPost(call, handle, owner);
    const media = "med_01jd0000000000000000000000";
    const added = await call("POST", `/api/v1/posts/${post.id}/attachments`, owner, {
      expected_revision: 1,
      media_id: media,
    });
    expect(added.body.post).toMatchObject({ attachments: [media], current_revision: 2 });
    const removed = await call("DELETE", `/api/v1/posts/${post.id}/attachments/${media}?expected_revision=2`, owner);
    expect(removed.body.post).toMatchObject({ attachments: [], current_revision: 3 });
  });
});
