import { Code, ConnectError } from "@connectrpc/connect";
import { beforeAll, describe, expect, it } from "vitest";
import { CommentService } from "../../gen/pf/community/v1/comments_pb.js";
import { describeWith } from "../support/skips.js";
import { until } from "../support/until.js";
import { SERVERS, useBeside } from "../support/beside.js";
import { untilPushFailed } from "../support/search-relay.js";
import { httpAt } from "../support/platform.js";
import { ALL_BLOG, found, fresh, newBlog, newPost, webCaller } from "./support.js";

// Community and search in a platform of their own, cut off while a post is deleted: the delete is answered at once,
// and the thread is hidden and the search document tombstoned once they are back, also when blog's process is killed
// in between and another takes over.
const split = useBeside("blog", { callees: ["community", "search"] });
let web = "";
let commenter = "";
beforeAll(async () => {
  web = await split.service.token({ kind: "service", svc: "web", caps: ALL_BLOG });
  commenter = await split.callees.token({ kind: "service", svc: "web", caps: ["community.comment.write"] });
});
const call = webCaller(split.service, () => web);
type Call = typeof call;

/** The post's comment thread as a commenter sees it: its visibility, or "missing" (hidden from all but moderators). */
const thread = (post: string) =>
  split.callees
    .client(CommentService, commenter)
    .resolveThread({ ref: { service: "blog", kind: "post", id: post } })
    .then(
      (answer) => answer.thread!.visibility,
      (error: unknown) => {
        if (ConnectError.from(error).code === Code.NotFound) return "missing";
        throw error;
      },
    );

/** A published post with a comment thread, found in search by its word; answers the post id and the word. */
async function publishedPost(call: Call) {
  const { owner, handle } = await newBlog(call);
  const word = fresh("word");
  const post = await newPost(call, handle, owner, { title: `About ${word}`, body: `All about ${word}.` });
  expect((await call("POST", `/api/v1/posts/${post.id}/publish`, owner, {})).status).toBe(200);
  expect(await thread(post.id)).toBe("public");
  await until(async () => (await found(split, word)).includes(post.id));
  return { id: post.id as string, owner, word };
}

/** Deletes the post while community and search are unreachable: answered, and the post reads 410 at once. */
async function deleteWhileCut(call: Call, post: { id: string; owner: string }) {
  await split.reachable(["community", "search"], false);
  const deleted = await call("DELETE", `/api/v1/posts/${post.id}`, post.owner);
  expect(deleted.status, JSON.stringify(deleted.body)).toBe(200);
  expect(deleted.body.id).toBe(post.id);
  expect((await call("GET", `/api/v1/posts/${post.id}`)).body).toMatchObject({ status: 410, code: "post.deleted" });
  // The relay tries and fails meanwhile (and the effect, woken by the same commit, with it).
  await untilPushFailed(split.service.platform.databaseUrl, "blog", [post.id]);
}

/** Once community and search are back: the thread is hidden and the document leaves search. */
async function effectsArrive(post: { id: string; word: string }) {
  expect(await found(split, post.word)).toContain(post.id);
  await split.reachable(["community", "search"], true);
  await until(async () => (await thread(post.id)) === "missing", 30_000);
  await until(async () => !(await found(split, post.word)).includes(post.id), 30_000);
}

describe("deleting a published post while community and search are unreachable", () => {
  it("answers the delete (410 to readers), then hides the thread and tombstones the document once they are back", async () => {
    const post = await publishedPost(call);
    await deleteWhileCut(call, post);
    await effectsArrive(post);
  }, 90_000);
});

describeWith(SERVERS, "blog's process killed between the delete and its effects", () => {
  it("loses neither: the next process hides the thread and tombstones the document once they are back", async () => {
    let post: Awaited<ReturnType<typeof publishedPost>> | undefined;
    await split.killedAfter(async (gatewayUrl) => {
      const inChild = webCaller(httpAt(gatewayUrl), () => web);
      post = await publishedPost(inChild);
      await deleteWhileCut(inChild, post);
    });
    expect((await call("GET", `/api/v1/posts/${post!.id}`)).body).toMatchObject({ status: 410, code: "post.deleted" });
    await effectsArrive(post!);
  }, 210_000); // a child's start (CHILD_START_MS) and the work
});
