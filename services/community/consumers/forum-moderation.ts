import { ConnectError } from "@connectrpc/connect";
import type { ModerationResult } from "../../../gen/pf/space/v1/internal_pb.js";
import { SpaceInternalService } from "../../../gen/pf/space/v1/internal_pb.js";
import { ModerationRecordedSchema } from "../../../gen/pf/community/v1/events_pb.js";
import { effect } from "../../kit/effects/effect.js";
import { problemOf } from "../../kit/handler/problem.js";
import { unanswered } from "../../kit/rpc/relay-failure.js";
import type { CommunityContext } from "../context.js";
import type { ModerationRow } from "../db/entities.js";
import { moderationById, settleModeration } from "../db/moderation.js";
import { subjects } from "../events.js";

/** What applying a forum moderation record came to. */
export type ForumOutcome =
  | { row: ModerationRow; result?: ModerationResult }
  | { row: ModerationRow; pending: ConnectError }
  | { row: ModerationRow; refused: ConnectError };

/** Space's idempotency key for a record: the same for the inline attempt and every retry, so space applies it once. */
const keyOf = (row: ModerationRow) => `community.moderation:${row.id}`;

/** Asks space to apply a record, as the moderator it names (vouched staff person, or community acting as itself). */
function callSpace(ctx: CommunityContext, row: ModerationRow): Promise<ModerationResult> {
  const space = ctx.client(SpaceInternalService);
  const headers = row.person ? { "x-pf-subject": row.person, "x-pf-staff": "1" } : undefined;
  const common = { idempotencyKey: keyOf(row), reason: row.reason, relayedBy: row.relayedBy };
  switch (row.action) {
    case "edit_post":
      return space.editPost({ postId: row.targetId, body: row.body, ...common }, { headers });
    case "delete_post":
      return space.deletePost({ postId: row.targetId, ...common }, { headers });
    case "pin":
      return space.pinThread({ threadId: row.targetId, pinned: row.value === "true", ...common }, { headers });
    case "lock":
      return space.lockThread({ threadId: row.targetId, locked: row.value === "true", ...common }, { headers });
    default:
      throw new Error(`no forum action ${row.action}`);
  }
}

/**
 * Applies a pending forum moderation record in space (never inside a
 * transaction) and settles it: applied once space answered, failed with
 * space's problem code once space refused. While space does not answer the
 * record stays pending (never shown as done); the effect below retries it.
 * A record already settled is answered as it is.
 */
export async function applyForumModeration(ctx: CommunityContext, id: string): Promise<ForumOutcome> {
  const row = (await ctx.transaction((em) => moderationById(em, id)))!;
  if (row.status !== "pending") return { row };
  let result: ModerationResult;
  try {
    result = await callSpace(ctx, row);
  } catch (error) {
    const failure = ConnectError.from(error);
    if (unanswered(failure)) return { row, pending: failure };
    const settled = await ctx.transaction((em) =>
      settleModeration(em, id, { status: "failed", failure: problemOf(failure).code }, ctx.clock.now()),
    );
    return { row: settled, refused: failure };
  }
  const settled = await ctx.transaction((em) => settleModeration(em, id, { status: "applied" }, ctx.clock.now()));
  return { row: settled, result };
}

/**
 * The reliable half: every forum moderation record is applied in space from
 * its own event, retried (the kit's effect back-off) for as long as space
 * does not answer, so a moderator's request that was answered 202 pending is
 * applied once space is back.
 */
export const forumModeration = effect<CommunityContext, typeof ModerationRecordedSchema>({
  name: "forum-moderation",
  subject: subjects.moderationRecorded,
  event: ModerationRecordedSchema,
  async apply(event, ctx) {
    const record = event.record;
    if (!record || record.target?.service !== "space" || record.status !== "pending") return;
    const outcome = await applyForumModeration(ctx, record.id);
    if ("pending" in outcome) throw outcome.pending;
  },
});
