import type { Beside } from "../support/beside.js";
import type { TestPlatform } from "../support/platform.js";

/** Every blog capability: the first-party web service's token. */
export const ALL_BLOG = [
  "blog.blog.create",
  "blog.blog.configure",
  "blog.feed.read",
  "blog.member.manage",
  "blog.post.create",
  "blog.post.read",
  "blog.post.update",
  "blog.post.delete",
  "blog.post.publish",
  "blog.post.schedule",
  "blog.post.unpublish",
  "blog.theme.set",
];

let n = 0;
/** A fresh word, unique within a run. */
export const fresh = (tag: string) => `${tag}${Date.now().toString(36)}${(n++).toString(36)}`;
/** A fresh person id. */
export const person = (tag = "p") => `usr_${fresh(tag)}`;

/** Calls through the gateway as the web service acting for `who` (no one when undefined). */
export function webCaller(t: Pick<TestPlatform, "http">, token: () => string) {
  return (method: string, path: string, who?: string, body?: unknown, headers: Record<string, string> = {}) =>
    t.http(method, `/blog${path}`, {
      token: token(),
      body,
      headers: { ...(who ? { "x-pf-subject": who } : {}), ...headers },
    });
}

/** A blog of a fresh owner; answers its handle and owner. */
export async function newBlog(call: ReturnType<typeof webCaller>) {
  const owner = person("own");
  const handle = fresh("b").slice(0, 28);
  const answer = await call("POST", "/api/v1/blogs", owner, { handle, title: "My blog" });
  if (answer.status !== 201) throw new Error(`blog create: ${answer.status} ${JSON.stringify(answer.body)}`);
  return { owner, handle };
}

/** A draft on the blog by `who`; answers the post. */
export async function newPost(
  call: ReturnType<typeof webCaller>,
  handle: string,
  who: string,
  body: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  const answer = await call(
    "POST",
    `/api/v1/blogs/${handle}/posts`,
    who,
    { title: "Hello world", body: "First.", ...body },
    headers,
  );
  if (answer.status !== 201) throw new Error(`post create: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.post;
}

/** The ids of the blog's posts anyone finds in search by these words. */
export async function found(split: Beside, words: string): Promise<string[]> {
  const answer = await split.callees.http(
    "GET",
    `/search/api/v1/search?owner=blog&type=post&q=${encodeURIComponent(words)}`,
  );
  if (answer.status !== 200) throw new Error(`search: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.results.map((hit: { id: string }) => hit.id);
}
