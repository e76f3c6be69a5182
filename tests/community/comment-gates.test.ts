import { beforeAll, describe, expect, it } from "vitest";
import { SpaceVisibility } from "../../gen/pf/space/v1/forum_pb.js";
import { ALL_BLOG, newBlog, newPost, webCaller } from "../blog/support.js";
import { ALL_NEWS, EDITOR, NEWS_ENV, newsCaller, openStory } from "../news/support.js";
import { makeSpace, spaceKey, writerService } from "../space/support.js";
import { aiRun } from "../support/ai-runs.js";
import { usePlatform } from "../support/platform.js";
import { ALL_COMMUNITY, as, createPaste, expectStatus, person, serviceToken } from "./support.js";

// Issue 24, finding 2: a comment thread answers as the content it belongs to does, through every route that
// reaches it. Blog, news and space answer community's CheckContentAccess in the same platform.
const t = usePlatform({ services: ["community", "blog", "news", "space", "ai"], env: NEWS_ENV });
let web: ReturnType<typeof as>;
let communityToken = "";
let blog: ReturnType<typeof webCaller>;
let news: ReturnType<typeof newsCaller>;
beforeAll(async () => {
  communityToken = await serviceToken(t, ALL_COMMUNITY);
  web = as(t, () => communityToken);
  const blogToken = await t.token({ kind: "service", svc: "web", caps: ALL_BLOG });
  blog = webCaller(t, () => blogToken);
  const newsToken = await t.token({ kind: "service", svc: "web", caps: ALL_NEWS });
  news = newsCaller(t, () => newsToken);
});

type Ref = { service: string; kind: string; id: string };

/**
 * A thread of the ref with one comment in it, both made by the platform acting as itself (a service resolving the
 * thread, AI output commenting), which no content gate stops.
 */
async function threadOf(ref: Ref) {
  const thread = expectStatus(await web("POST", "/api/v1/comments/threads/resolve", undefined, { ref }), 200).body
    .thread;
  const ai = { "x-pf-origin": "ai" };
  const runner = await serviceToken(t, ["ai.run.create"]);
  const { runId } = await aiRun(t, { token: runner, workflow: "community.comment" });
  const body = { body: "A summary", workflow: "community.comment", run_id: runId };
  const comment = expectStatus(
    await web("POST", `/api/v1/comments/threads/${thread.id}/comments`, undefined, body, ai),
    201,
  ).body.comment;
  return { ref, thread: thread.id as string, comment: comment.id as string };
}

/** What every route reaching the thread answers `who` (a service's X-PF-Subject, with `headers`), as "status code". */
async function routes(target: Awaited<ReturnType<typeof threadOf>>, who: string, headers: Record<string, string> = {}) {
  const answer = async (method: string, path: string, body?: unknown) => {
    const { status, body: got } = await web(method, path, who, body, headers);
    return status < 300 ? String(status) : `${status} ${got.code}`;
  };
  return {
    resolve: await answer("POST", "/api/v1/comments/threads/resolve", { ref: target.ref }),
    read: await answer("GET", `/api/v1/comments/threads/${target.thread}`),
    comment: await answer("POST", `/api/v1/comments/threads/${target.thread}/comments`, { body: "hi" }),
    vote: await answer("POST", `/api/v1/comments/${target.comment}/votes`, { value: 1 }),
    delete: await answer("DELETE", `/api/v1/comments/${target.comment}`),
  };
}

/** Every route refused alike. */
const everywhere = (refusal: string) => ({
  resolve: refusal,
  read: refusal,
  comment: refusal,
  vote: refusal,
  delete: refusal,
});
/** Every route open: the AI comment is not the caller's to delete (row ownership, past the content gate). */
const OPEN = { resolve: "200", read: "200", comment: "201", vote: "200", delete: "403 comment.not_author" };
const MISSING = everywhere("404 thread.not_found");

/** A published post of a fresh blog with this visibility; answers its ref and owner. */
async function publishedPost(visibility: string) {
  const { owner, handle } = await newBlog(blog);
  const post = await newPost(blog, handle, owner, { visibility });
  expectStatus(await blog("POST", `/api/v1/posts/${post.id}/publish`, owner, {}), 200);
  return { ref: { service: "blog", kind: "post", id: post.id as string }, owner, post: post.id as string };
}

describe("threads of blog posts answer as the post does", () => {
  it("a members-only post's thread is 404 to a non-member through every route, as the post is; open to its members", async () => {
    const { ref, owner, post } = await publishedPost("members-only");
    const target = await threadOf(ref);
    const stranger = person("stranger");
    expect((await blog("GET", `/api/v1/posts/${post}`, stranger)).body.code).toBe("post.not_found");

    expect(await routes(target, stranger)).toEqual(MISSING);
    expect(await routes(target, `gst_${stranger.slice(4)}`)).toEqual(MISSING);
    const browser = await t.token({ kind: "user", sub: stranger });
    const own = await t.http("GET", `/community/api/v1/comments/threads/${target.thread}`, { token: browser });
    expect(own.body).toMatchObject({ status: 404, code: "thread.not_found" });

    // The blog's members read the post, so they reach its thread; the platform acting as itself always does.
    expect(await routes(target, owner)).toEqual(OPEN);
    expectStatus(await web("GET", `/api/v1/comments/threads/${target.thread}`, undefined), 200);
  });

  it("a draft's thread is 404 until the post is published; a private post's and a deleted post's stay 404", async () => {
    const { owner, handle } = await newBlog(blog);
    const draft = await newPost(blog, handle, owner);
    const target = await threadOf({ service: "blog", kind: "post", id: draft.id });
    const reader = person("reader");
    expect(await routes(target, reader)).toEqual(MISSING);
    expectStatus(await blog("POST", `/api/v1/posts/${draft.id}/publish`, owner, {}), 200);
    expect(await routes(target, reader)).toEqual(OPEN);

    const hidden = await threadOf((await publishedPost("private")).ref);
    expect(await routes(hidden, reader)).toEqual(MISSING);

    const gone = await publishedPost("public");
    const goneThread = await threadOf(gone.ref);
    expectStatus(await blog("DELETE", `/api/v1/posts/${gone.post}`, gone.owner), 200);
    expect(await routes(goneThread, gone.owner)).toEqual(MISSING);
  });

  it("a ref of no post answers 404 and leaves no thread behind", async () => {
    const ref = { service: "blog", kind: "post", id: "pst_01jd0000000000000000000000" };
    const answer = await web("POST", "/api/v1/comments/threads/resolve", person("r"), { ref });
    expect(answer.body).toMatchObject({ status: 404, code: "thread.not_found" });
  });
});

describe("threads of news stories and forum threads", () => {
  it("a draft story's thread is 404 to anyone but editors", async () => {
    const { story } = await openStory(t, news, 1);
    const target = await threadOf({ service: "news", kind: "story", id: story });
    expect(await routes(target, person("reader"))).toEqual(MISSING);
    expect(await routes(target, EDITOR)).toEqual(OPEN);
  });

  it("a members-only space's thread is 403 vip.members_only without a membership; a staff space's 404; staff pass", async () => {
    const creator = person("creator");
    const vip = await makeSpace(t, spaceKey("vip"), { membersOnly: true, vipCreator: creator });
    const staffOnly = await makeSpace(t, spaceKey("staff"), { visibility: SpaceVisibility.STAFF });
    const token = await writerService(t);
    const moderator = { "x-pf-subject": person("mod"), "x-pf-staff": "1" };
    const forumThread = async (space: string) => {
      const answer = await t.http("POST", `/space/api/v1/spaces/${space}/threads`, {
        token,
        headers: moderator,
        body: { title: "Inside", body: "First post" },
      });
      return threadOf({ service: "space", kind: "thread", id: expectStatus(answer, 201).body.thread.id });
    };
    const inVip = await forumThread(vip);
    const inStaff = await forumThread(staffOnly);

    // Vip does not run here: no one is entitled ("unknown never authorizes"), as space answers its own thread.
    const reader = person("reader");
    expect(await routes(inVip, reader)).toEqual(everywhere("403 vip.members_only"));
    expect(await routes(inStaff, reader)).toEqual(MISSING);
    // Vouched staff are the forum's moderators (their delete is the moderator's rule: a reason is required).
    const staff = await routes(inVip, moderator["x-pf-subject"], { "x-pf-staff": "1" });
    expect(staff).toEqual({ ...OPEN, delete: "400 request.invalid" });
  });
});

describe("a paste's thread", () => {
  it("is hidden by the paste's delete", async () => {
    const owner = person("owner");
    const paste = await createPaste(t, communityToken, owner);
    const target = await threadOf({ service: "community", kind: "paste", id: paste.id });
    const reader = person("reader");
    expect(await routes(target, reader)).toEqual(OPEN);
    expectStatus(await web("DELETE", `/api/pastes/${paste.slug}`, owner), 200);
    expect(await routes(target, reader)).toEqual(MISSING);
  });
});
