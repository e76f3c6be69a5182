import { problem, problemOf } from "../../kit/handler/problem.js";
import { leasedJob } from "../../kit/service/lease.js";
import type { BlogContext } from "../context.js";
import { dueScheduleIds, finishSchedule, lockPendingSchedule, postById } from "../db/posts.js";
import { scheduleFinished } from "../events.js";
import { publishNow, unpublishNow } from "../publishing.js";
import { requireStillEditor } from "../ownership.js";

/** Schedules looked up per pass of the loop. */
const BATCH = 50;
/** The scheduler acts as itself. */
const ACTOR = "blog.scheduler";

/**
 * The scheduler ("applied by a worker with leases"): one instance at a time
 * (the lease), due by the injected clock. Each schedule is applied in its own
 * transaction that locks it while still pending, through the same gate as
 * POST /publish; the state moves from pending once, in the transaction of
 * the publish and its event, so a crash never publishes twice. The person
 * who scheduled it must still hold a role that may publish the post (they
 * may have been removed or demoted since, or raced that change). A refusal
 * marks it failed and writes blog.schedule.failed in that same transaction:
 * emitted exactly once.
 */
export const scheduler = leasedJob<BlogContext>(
  "blog.scheduler",
  (ctx) => ({ everyMs: ctx.settings.schedulerEveryMs, firstAfterMs: 0 }),
  async (ctx) => {
    for (;;) {
      const due = await ctx.transaction((em) => dueScheduleIds(em, ctx.clock.now(), BATCH));
      for (const id of due) await applySchedule(ctx, id);
      if (due.length < BATCH) return;
    }
  },
);

async function applySchedule(ctx: BlogContext, id: string): Promise<void> {
  const at = ctx.clock.now();
  let failure: { code: string; detail: string } | undefined;
  try {
    await ctx.transaction(async (em) => {
      const schedule = await lockPendingSchedule(em, id);
      if (!schedule) return;
      const post = await postById(em, schedule.postId, true);
      if (!post || post.state === "deleted") throw refusal("post.deleted", "The post is deleted.");
      await requireStillEditor(em, post, schedule.scheduledBy);
      const changed =
        schedule.action === "publish"
          ? await publishNow(em, post, schedule.revision, ACTOR, at)
          : await unpublishNow(em, post, ACTOR, at);
      if (!changed && schedule.action === "unpublish")
        throw refusal("post.not_published", "The post is not published.");
      await finishSchedule(em, schedule.id, "applied", "", at);
      await scheduleFinished(em, schedule);
    });
    return;
  } catch (error) {
    const found = problemOf(error);
    // Only a definite refusal fails the schedule; anything else (the database) is tried on the next pass.
    if (found.status >= 500) throw error;
    failure = { code: found.code, detail: found.detail };
  }
  await ctx.transaction(async (em) => {
    const schedule = await lockPendingSchedule(em, id);
    if (!schedule) return;
    await finishSchedule(em, schedule.id, "failed", failure.code, at);
    await scheduleFinished(em, schedule, failure);
  });
}

/** A schedule that cannot succeed, as the problem a caller of the route would get. */
function refusal(code: string, detail: string) {
  return problem(409, code, detail);
}
