import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { SpaceService } from "../../../gen/pf/space/v1/space_pb.js";
import type { SpaceContext } from "../context.js";
import { lockThread, threadNotFound, updateThread } from "../db/threads.js";
import { setVote } from "../db/votes.js";
import { hotness } from "../../kit/handler/hotness.js";
import { threadChanged } from "../events.js";
import { readerOf } from "../readers.js";
import { threadTarget, type ThreadTarget } from "../targets.js";
import { limitWriter, voterOf, written, type Writer } from "../writers.js";
import { requireOpen } from "./posts.js";
import { type Outcome, writeResult } from "../results.js";

type VoteHandlers = Pick<ServiceImpl<typeof SpaceService>, "voteOnThread">;

/**
 * Sets a person's vote. Under the thread's row lock: votes on one thread apply
 * one at a time, the (thread, person) key keeps one per person, and score and
 * hot are recounted from the votes in the same transaction, so however many
 * arrive at once the score is the sum of the votes.
 */
export async function voteIn(
  ctx: SpaceContext,
  em: EntityManager,
  writer: Extract<Writer, { kind: "person" }>,
  target: ThreadTarget,
  value: -1 | 0 | 1,
): Promise<Outcome> {
  const thread = await lockThread(em, { id: target.thread.id });
  if (!thread) throw threadNotFound();
  requireOpen(thread);
  await limitWriter(ctx, em, writer, "vote");
  const at = ctx.clock.now();
  const score = await setVote(em, { threadId: thread.id, person: writer.person, value, at });
  const hot = hotness(score, new Date(thread.createdAt));
  const next = { ...thread, score, hot, myVote: value };
  if (score !== thread.score) {
    await updateThread(em, thread.id, { score, hot });
  }
  await threadChanged(em, "voted", { space: target.space, thread: next, actor: writer.person, at });
  return { thread: next };
}

export function voteHandlers(ctx: SpaceContext): VoteHandlers {
  return {
    async voteOnThread(request, call) {
      const writer = voterOf(call);
      const value = request.value as -1 | 0 | 1;
      return written(
        ctx,
        call,
        request,
        { scope: `space.vote:${writer.person}` },
        () => threadTarget(ctx, readerOf(ctx, call), { space: request.space, slug: request.slug }),
        async (em, target) => writeResult(await voteIn(ctx, em, writer, target, value)),
      );
    },
  };
}
