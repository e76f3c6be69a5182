import { beforeAll, describe, expect, it } from "vitest";
import { CommentService } from "../../gen/pf/community/v1/comments_pb.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { ALL_BLOG, newBlog, newPost, person, webCaller } from "./support.js";

/** Blog beside the services it reaches: community (threads) and vip (members-only posts). */
const t = usePlatform({ services: ["blog", "community", "vip"] });
let web = "";
let commenter = "";
beforeAll(async () => {
  web = await t.token({ kind: "service", svc: "web", caps: ALL_BLOG });
  commenter = await t.token({ kind: "service", svc: "web", caps: ["community.comment.write"] });
});
const call = webCaller(t, () => web);

describe("a deleted post's comment thread", () => {
  it("is hidden in community through the reliable path, after the delete commits", async () => {
    const { owner, handle } = await newBlog(call);
    const post = await newPost(call, handle, owner);
    await call("POST", `/api/v1/posts/${post.id}/publish`, owner, {});
    const comments = t.client(CommentService, commenter);
    const ref = { service: "blog", kind: "post", id: post.id };
    const thread = async () => (await comments.resolveThread({ ref })).thread!;
    expect((await thread()).visibility).toBe("public");
    expect((await call("DELETE", `/api/v1/posts/${post.id}`, owner)).status).toBe(200);
    // Hidden: missing to everyone but moderators.
    await until(() =>
      thread().then(
        () => false,
        (error: unknown) => String(error).includes("No such comment thread"),
      ),
    );
  });
});

describe("members-only posts", () => {
  it("are read by blog members, and 404 to readers the owner's vip membership does not entitle", async () => {
    const { owner, handle } = await newBlog(call);
    const post = await newPost(call, handle, owner, { visibility: "members-only" });
    await call("POST", `/api/v1/posts/${post.id}/publish`, owner, {});
    expect((await call("GET", `/api/v1/posts/${post.id}`, owner)).status).toBe(200);
    expect((await call("GET", `/api/v1/posts/${post.id}`, person("reader"))).body).toMatchObject({
      status: 404,
      code: "post.not_found",
    });
    expect((await t.http("GET", `/blog/api/v1/posts/${post.id}`)).status).toBe(404);
  });
});
