import { beforeAll, describe, expect, it } from "vitest";
import { BlogService } from "../../gen/pf/blog/v1/blogs_pb.js";
import { PostService } from "../../gen/pf/blog/v1/posts_pb.js";
import { BlogContentService } from "../../gen/pf/blog/v1/content_pb.js";
import { Actor } from "../../gen/pf/v1/options_pb.js";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type RouteCall,
} from "../support/access.js";
import { describeContentAccess } from "../support/content-access.js";
import { usePlatform } from "../support/platform.js";
import { ALL_BLOG, newPost, webCaller } from "./support.js";

const post = "/blog/api/v1/posts/pst_01jd0000000000000000000000";
/** One valid call per blog route; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  createBlog: { method: "POST", path: "/blog/api/v1/blogs", body: { handle: "access-blog" } },
  configureBlog: { method: "PATCH", path: "/blog/api/v1/blogs/access-blog", body: { title: "T" } },
  getFeed: { method: "GET", path: "/blog/api/v1/blogs/access-blog/feed" },
  getPublicFeed: { method: "GET", path: "/blog/feeds/access-blog/feed.json" },
  listMembers: { method: "GET", path: "/blog/api/v1/blogs/access-blog/members" },
  setMember: { method: "PUT", path: "/blog/api/v1/blogs/access-blog/members/usr_x", body: { role: "author" } },
  removeMember: { method: "DELETE", path: "/blog/api/v1/blogs/access-blog/members/usr_x" },
  setTheme: { method: "PUT", path: "/blog/api/v1/blogs/access-blog/theme", body: { theme: "nord" } },
  createPost: { method: "POST", path: "/blog/api/v1/blogs/access-blog/posts", body: { title: "T" } },
  listPosts: { method: "GET", path: "/blog/api/v1/blogs/access-blog/posts" },
  getPostBySlug: { method: "GET", path: "/blog/api/v1/blogs/access-blog/posts/by-slug/hello" },
  getPost: { method: "GET", path: post },
  updatePost: { method: "PATCH", path: post, body: { expected_revision: 1, title: "T" } },
  deletePost: { method: "DELETE", path: post },
  addAttachment: {
    method: "POST",
    path: `${post}/attachments`,
    body: { expected_revision: 1, media_id: "med_01jd0000000000000000000000" },
  },
  removeAttachment: {
    method: "DELETE",
    path: `${post}/attachments/med_01jd0000000000000000000000?expected_revision=1`,
  },
  getDiff: { method: "GET", path: `${post}/diff` },
  publishPost: { method: "POST", path: `${post}/publish`, body: {} },
  revertPost: { method: "POST", path: `${post}/revert`, body: { expected_revision: 2, revision: 1 } },
  listRevisions: { method: "GET", path: `${post}/revisions` },
  getRevision: { method: "GET", path: `${post}/revisions/1` },
  schedulePost: { method: "POST", path: `${post}/schedule`, body: { action: "publish", at: "2099-01-01T00:00:00Z" } },
  cancelSchedule: { method: "DELETE", path: `${post}/schedule` },
  unpublishPost: { method: "POST", path: `${post}/unpublish`, body: {} },
};

const routes = routesOf(BlogService, PostService);
const t = usePlatform({ services: ["blog"] });

/**
 * The matrix's people hold every role its relations ask (usr_a1 and usr_b1 own access-blog; the post is theirs), so
 * the OUTSIDER is refused by the relation, not by a missing blog or post (404 to anyone).
 */
beforeAll(async () => {
  const web = await t.token({ kind: "service", svc: "web", caps: ALL_BLOG });
  const call = webCaller(t, () => web);
  await call("POST", "/api/v1/blogs", "usr_a1", { handle: "access-blog" });
  await call("PUT", "/api/v1/blogs/access-blog/members/usr_b1", "usr_a1", { role: "owner" });
  const { id } = await newPost(call, "access-blog", "usr_a1");
  for (const each of Object.values(calls)) each.path = each.path.replace(post, `/blog/api/v1/posts/${id}`);
});
const DESIGNED = ["getPublicFeed", "getPostBySlug"];

describe("every blog route", () => {
  it("has a call here (22 documented routes and 2 designed)", () => {
    expect(routes).toHaveLength(24);
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
  });

  itWithSpec("matches routes.tsv exactly (22 routes: method, path, capability, visibility)", "blog", (documented) => {
    expect(documented).toHaveLength(22);
    const bound = routes.filter((route) => !DESIGNED.includes(route.name)).map(bindingOf);
    for (const [, verb, path, caps, visibility] of documented) {
      expect(bound, `${verb} ${path}`).toContainEqual({ verb, template: path.replace(/\?.*$/, ""), caps, visibility });
    }
  });
});

describe("whom each blog route admits, as declared", () => {
  it("reads of public posts and feeds open to anonymous callers; writes act for a person; staff alternatives", () => {
    const declared = Object.fromEntries(
      routes.map((route) => [route.name, [Actor[route.rule.actor], route.rule.anonymous, route.rules.length]]),
    );
    for (const name of ["getFeed", "getPublicFeed", "listPosts", "getPost", "getPostBySlug"])
      expect(declared[name], name).toEqual(["UNSPECIFIED", true, 1]);
    // Owners and members by the declared relation first, staff (the official blog, any post) otherwise.
    for (const name of ["configureBlog", "deletePost"]) expect(declared[name], name).toEqual(["PERSON", false, 2]);
    expect(declared.createBlog).toEqual(["MEMBER", false, 1]);
    for (const name of ["updatePost", "publishPost", "schedulePost", "unpublishPost", "setTheme", "setMember"])
      expect(declared[name], name).toEqual(["PERSON", false, 1]);
  });

  it("serves the public feed URLs to a caller without a token", async () => {
    expect((await t.http("GET", "/blog/feeds/nobody-here/rss.xml")).body).toMatchObject({
      status: 404,
      code: "blog.not_found",
    });
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);

// The content access community asks about this service's objects for their comment threads.
describeContentAccess(t, BlogContentService, "blog.content.check", {
  kind: "post",
  id: "pst_01jd0000000000000000000000",
});
