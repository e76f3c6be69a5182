import { beforeAll, describe, expect, it } from "vitest";
import { markdownRendering } from "../../services/kit/rich-text/rendering.js";
import { usePlatform } from "../support/platform.js";
import { DATABASE_SERVER, itWith } from "../support/skips.js";
import { statementsDuring } from "../support/statements.js";
import { until } from "../support/until.js";
import { ALL_BLOG, fresh, newBlog, newPost, webCaller } from "./support.js";

/**
 * Issue 24, finding 1: a blog feed of ten 200,000-character posts took 10–32 s and stalled /healthz, because
 * Markdown was rendered on every read inside the feed's transaction on the event loop every service shares, and
 * the ETag was computed after rendering. Now the Markdown is rendered on a worker thread after the transaction,
 * cached by digest, and the feed is named by its version before any of it.
 */
const t = usePlatform({ services: ["blog"] });
let web = "";
beforeAll(async () => {
  web = await t.token({ kind: "service", svc: "web", caps: ALL_BLOG });
});
const call = webCaller(t, () => web);
const stats = () => markdownRendering().stats();
const feedUrl = (handle: string, file = "rss.xml") => `${t.gatewayUrl}/blog/feeds/${handle}/${file}`;

/** About `chars` characters of Markdown unique to this run: links, emphasis and code on every line. */
const heavy = (chars: number) => {
  const tag = fresh("w");
  const line = (i: number) => `[${tag} ${i}](https://x.example/${i}) *em* **strong** \`code\``;
  return Array.from({ length: Math.ceil(chars / 50) }, (_, i) => line(i))
    .join("\n")
    .slice(0, chars);
};

/** A blog with `count` published posts of the bodies given (each with a summary, so feeds render only bodies). */
async function blogWith(count: number, body: () => string) {
  const { owner, handle } = await newBlog(call);
  const posts = [];
  for (let i = 0; i < count; i++) {
    const post = await newPost(call, handle, owner, { title: `Post ${i}`, summary: `Summary ${i}`, body: body() });
    expect((await call("POST", `/api/v1/posts/${post.id}/publish`, owner, {})).status).toBe(200);
    posts.push(post);
  }
  return { owner, handle, posts };
}

describe("a blog feed of ten 200,000-character posts (issue 24)", () => {
  itWith(
    DATABASE_SERVER,
    "renders them on a worker after the transaction: /healthz answers while they render, no transaction is open",
    async () => {
      const { handle } = await blogWith(10, () => heavy(200_000));
      // The posts' answers rendered them when written: a process just started has rendered none of them.
      markdownRendering().forget();
      const before = stats();
      let feedDone = false;
      const feed = fetch(feedUrl(handle, "feed.json")).then(async (answer) => {
        feedDone = true;
        return { status: answer.status, text: await answer.text() };
      });
      await until(() => stats().asked > before.asked);
      // The renders are in flight: the event loop still answers, and the feed holds no transaction open.
      const health = await fetch(`${t.gatewayUrl}/healthz`);
      expect(health.status).toBe(200);
      expect(feedDone).toBe(false);
      const em = t.platform.contexts.get("blog")!.orm.em.fork();
      const open = await em.getConnection().execute<{ open: number }[]>(
        `select count(*)::int as open from pg_stat_activity
           where datname = current_database() and pid <> pg_backend_pid() and state like 'idle in transaction%'`,
      );
      expect(open[0].open).toBe(0);
      const answer = await feed;
      expect(answer.status).toBe(200);
      const items = (JSON.parse(answer.text) as { items: { content_html?: string; content_text?: string }[] }).items;
      expect(items).toHaveLength(10);
      // Full text up to 1,000,000 characters of Markdown, newest first: five posts; the others carry their summary.
      expect(items.map((item) => item.content_html !== undefined)).toEqual([
        ...Array(5).fill(true),
        ...Array(5).fill(false),
      ]);
      expect(items[0].content_html).toContain('rel="nofollow ugc noopener"');
      expect(items[9].content_text).toMatch(/^Summary \d$/);
      expect(stats().asked - before.asked).toBe(5);
    },
    120_000,
  );

  it("is rendered once for twenty readers; a conditional GET with its ETag answers 304 without rendering", async () => {
    const { owner, handle, posts } = await blogWith(3, () => heavy(20_000));
    // Each post's answer rendered its body when it was written: the feed finds them rendered.
    const before = stats();
    const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(feedUrl(handle))));
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
    const etag = answers[0].headers.get("etag")!;
    expect(new Set(answers.map((answer) => answer.headers.get("etag")))).toEqual(new Set([etag]));
    const rendered = stats();
    expect(rendered).toMatchObject({ asked: before.asked, cached: before.cached + 3 });

    // The Atom feed is another document of the same posts: their HTML is already rendered.
    expect((await fetch(feedUrl(handle, "atom.xml"))).status).toBe(200);
    expect(stats()).toMatchObject({ asked: rendered.asked, cached: rendered.cached + 3 });

    const after = stats();
    const conditional = await fetch(feedUrl(handle), { headers: { "if-none-match": etag } });
    expect(conditional.status).toBe(304);
    expect(stats()).toEqual(after);

    // A new published revision is a new version: the old ETag no longer matches, its body is rendered.
    const edit = await call("PATCH", `/api/v1/posts/${posts[0].id}`, owner, {
      expected_revision: 1,
      body: "**Changed**",
    });
    expect(edit.status).toBe(200);
    expect((await call("POST", `/api/v1/posts/${posts[0].id}/publish`, owner, {})).status).toBe(200);
    const changed = await fetch(feedUrl(handle), { headers: { "if-none-match": etag } });
    expect(changed.status).toBe(200);
    expect(await changed.text()).toContain("<strong>Changed</strong>");
    // The edit's answer rendered the new body; publishing it answers it from the cache, as does the feed.
    expect(stats().asked - after.asked).toBe(1);
  });

  it("lists posts and revisions without their bodies; a post's read has its body and HTML", async () => {
    const { owner, handle, posts } = await blogWith(1, () => "**Only** in the read");
    const listing = await t.http("GET", `/blog/api/v1/blogs/${handle}/posts`);
    expect(listing.body.posts[0].revision).toMatchObject({ title: "Post 0", summary: "Summary 0" });
    expect(listing.body.posts[0].revision.body ?? "").toBe("");
    expect(listing.body.posts[0].revision.body_html ?? "").toBe("");
    const revisions = await call("GET", `/api/v1/posts/${posts[0].id}/revisions`, owner);
    expect(revisions.body.revisions[0].body ?? "").toBe("");
    const read = await t.http("GET", `/blog/api/v1/posts/${posts[0].id}`);
    expect(read.body.post.revision).toMatchObject({
      body: "**Only** in the read",
      body_html: "<p><strong>Only</strong> in the read</p>\n",
    });
  });
});

describe("the public reads' cost (issue 24)", () => {
  it("a page of posts and a feed cost the statements of 2 posts with 8; a post's read is one statement", async () => {
    const [two, eight] = [await blogWith(2, () => "Two."), await blogWith(8, () => "Eight.")];
    const TABLES = /posts|post_revisions|post_reviews|blogs|members/;
    type Listed = { id: string; revision: { title: string } };
    const listing = async (blog: { handle: string }) => {
      const answer = await t.http("GET", `/blog/api/v1/blogs/${blog.handle}/posts`);
      expect(answer.status).toBe(200);
      return answer.body.posts as Listed[];
    };
    const feed = async (blog: { handle: string }) => {
      const answer = await fetch(feedUrl(blog.handle, "feed.json"));
      expect(answer.status).toBe(200);
      return (await answer.json()) as { items: { id: string; title: string }[] };
    };
    // Before: the blog and the posts' page, then each post's revisions and reviews (6 statements against 18); the
    // feed, made on its first read, read each post's published revision (4 against 10).
    for (const read of [listing, feed])
      expect(await statementsDuring(TABLES, () => read(eight))).toBe(await statementsDuring(TABLES, () => read(two)));
    const newestFirst = [...eight.posts].reverse();
    expect((await listing(eight)).map((post) => [post.id, post.revision.title])).toEqual(
      newestFirst.map((post, i) => [post.id, `Post ${7 - i}`]),
    );
    expect((await feed(eight)).items.map((item) => item.title)).toEqual(newestFirst.map((_, i) => `Post ${7 - i}`));
    const pages: string[] = [];
    for (let cursor = ""; ;) {
      const next = await t.http("GET", `/blog/api/v1/blogs/${eight.handle}/posts?limit=3&cursor=${cursor}`);
      pages.push(...next.body.posts.map((each: Listed) => each.id));
      cursor = next.body.next_cursor ?? "";
      if (!cursor) break;
    }
    expect(pages).toEqual(newestFirst.map((each) => each.id));
    const forged = Buffer.from(JSON.stringify(["yesterday", "pst_x"])).toString("base64url");
    const refused = await t.http("GET", `/blog/api/v1/blogs/${eight.handle}/posts?cursor=${forged}`);
    expect([refused.status, refused.body.code, refused.body.field]).toEqual([400, "request.invalid", "cursor"]);
    // A handler's own check answers the input guard's shape: its one fault in `errors`.
    expect(refused.body.errors).toEqual([{ field: "cursor", rule: "service", message: refused.body.detail }]);
    // Before: the post and its blog (and the reader's role) in one transaction, its revisions and reviews in another
    // (4 statements).
    const post = `/blog/api/v1/posts/${eight.posts[0].id}`;
    expect(await statementsDuring(TABLES, async () => expect((await t.http("GET", post)).status).toBe(200))).toBe(1);
  });
});
