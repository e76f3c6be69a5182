import { problemOf } from "../kit/handler/problem.js";
import { postNotFound, readPost, type StoredPost } from "./db/posts.js";
import { readSpace, type StoredSpace } from "./db/spaces.js";
import { readThread, readThreadById, threadNotFound, type StoredThread } from "./db/threads.js";
import type { SpaceContext } from "./context.js";
import { enter, type Reader } from "./readers.js";

/** Where a write lands, through the space's visibility and members-only gate (read before any transaction). */
export interface ThreadTarget {
  space: StoredSpace;
  thread: StoredThread;
}

/**
 * A thread by its space and slug (the public routes: 404 space.not_found for
 * a space the reader cannot open) or by id (community's routes: a thread in
 * a space the reader cannot open is 404 thread.not_found, as a missing one).
 */
export async function threadTarget(
  ctx: SpaceContext,
  reader: Reader,
  by: { space: string; slug: string } | { id: string },
): Promise<ThreadTarget> {
  if ("id" in by) {
    const thread = await readThreadById(ctx, by.id);
    if (!thread) throw threadNotFound();
    const space = await enterOr(ctx, reader, thread.space, threadNotFound);
    return { space, thread };
  }
  const space = await enter(ctx, reader, await readSpace(ctx, by.space));
  const thread = await readThread(ctx, space.key, by.slug, "");
  if (!thread) throw threadNotFound();
  return { space, thread };
}

/** A post by id, its thread and space; a post in a space the reader cannot open is 404 post.not_found. */
export async function postTarget(
  ctx: SpaceContext,
  reader: Reader,
  id: string,
): Promise<ThreadTarget & { post: StoredPost }> {
  const post = await readPost(ctx, id);
  const thread = post && (await readThreadById(ctx, post.threadId));
  if (!post || !thread) throw postNotFound();
  const space = await enterOr(ctx, reader, thread.space, postNotFound);
  return { space, thread, post };
}

/** `enter`, with an invisible space answered as `missing` (the object, not the space, is what the path names). */
async function enterOr(ctx: SpaceContext, reader: Reader, key: string, missing: () => Error): Promise<StoredSpace> {
  try {
    return await enter(ctx, reader, await readSpace(ctx, key));
  } catch (error) {
    if (problemOf(error).code === "space.not_found") throw missing();
    throw error;
  }
}
