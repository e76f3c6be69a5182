import { beforeAll, describe, expect, it } from "vitest";
import { until } from "../support/until.js";
import { useBeside } from "../support/beside.js";
import { untilPushFailed } from "../support/search-relay.js";
import { ALL_BLOG, found, fresh, newBlog, newPost, webCaller } from "./support.js";

// Search in a platform of its own, cut off while posts are published and unpublished: blog's writes never wait for
// it, and what they changed reaches search once it is back.
const split = useBeside("blog", { callees: ["search"] });
let web = "";
beforeAll(async () => {
  web = await split.service.token({ kind: "service", svc: "web", caps: ALL_BLOG });
});
const call = webCaller(split.service, () => web);

describe("publishing and unpublishing while search is unreachable", () => {
  it("never fails the write; the document arrives once search is back, and leaves once unpublished", async () => {
    const { owner, handle } = await newBlog(call);
    const word = fresh("word");
    const post = await newPost(call, handle, owner, { title: `On ${word}`, body: `Notes on ${word}.` });

    await split.reachable(["search"], false);
    const published = await call("POST", `/api/v1/posts/${post.id}/publish`, owner, {});
    expect(published.status, JSON.stringify(published.body)).toBe(200);
    expect(published.body.post).toMatchObject({ state: "published" });
    expect((await call("GET", `/api/v1/posts/${post.id}`)).status).toBe(200);
    // The relay tries and fails meanwhile; search has nothing of it.
    await untilPushFailed(split.service.platform.databaseUrl, "blog", [post.id]);
    expect(await found(split, word)).toEqual([]);
    await split.reachable(["search"], true);
    await until(async () => (await found(split, word)).includes(post.id), 30_000);

    await split.reachable(["search"], false);
    const unpublished = await call("POST", `/api/v1/posts/${post.id}/unpublish`, owner, {});
    expect(unpublished.status, JSON.stringify(unpublished.body)).toBe(200);
    expect(unpublished.body).toMatchObject({ unchanged: false, post: { state: "unpublished" } });
    expect((await call("GET", `/api/v1/posts/${post.id}`)).status).toBe(404);
    await untilPushFailed(split.service.platform.databaseUrl, "blog", [post.id]);
    // Search still shows what it had.
    expect(await found(split, word)).toEqual([post.id]);
    await split.reachable(["search"], true);
    await until(async () => (await found(split, word)).length === 0, 30_000);
  }, 90_000);
});
