import { Code, ConnectError } from "@connectrpc/connect";
import { PostEventSchema } from "../../../gen/pf/blog/v1/events_pb.js";
import { effect } from "../../kit/effects/effect.js";
import type { BlogContext } from "../context.js";
import { postSubject } from "../events.js";

/**
 * "Community thread hidden" when a post is deleted, through the reliable path
 * (kit/effects): the deleted event, written with the delete, is applied here
 * until community takes it. Both calls are idempotent (the thread of the ref
 * is resolved, created on first use; hidden again is hidden), and carry the
 * effect's key.
 */
export const hideDeletedPostThread = effect<BlogContext, typeof PostEventSchema>({
  name: "blog-thread-hidden",
  subject: postSubject("deleted"),
  event: PostEventSchema,
  // Posts are hidden independently: a backlog's threads are hidden side by side.
  orderKey: (event) => event.postId,
  async apply(event, ctx, key) {
    const headers = { "idempotency-key": key };
    const resolved = await ctx.community
      .resolveThread({ ref: { service: "blog", kind: "post", id: event.postId } }, { headers })
      .catch((error: unknown) => {
        // A hidden thread is missing to all but moderators: hidden already (a retry after a lost answer).
        if (ConnectError.from(error).code === Code.NotFound) return undefined;
        throw error;
      });
    const thread = resolved?.thread;
    if (!thread) return;
    await ctx.community.setThreadVisibility(
      { id: thread.id, visibility: "hidden", reason: "The blog post was deleted." },
      { headers },
    );
  },
});
