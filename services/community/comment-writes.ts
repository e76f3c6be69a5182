import type { EntityManager } from "@mikro-orm/postgresql";
import type { Author } from "../kit/auth/authorship.js";
import type { CommunityContext } from "./context.js";
import type { CommentRow, ThreadRow } from "./db/entities.js";
import { insertComment } from "./db/threads.js";
import { requireOpen } from "./domain/threads.js";
import { limitWriter, writerOf } from "./limits.js";

/**
 * Writes a comment in a thread the caller locked: not in a hidden (404) or
 * locked (409) thread, counted against the writer's limit.
 */
export async function writeComment(
  ctx: CommunityContext,
  em: EntityManager,
  thread: ThreadRow,
  author: Author,
  body: string,
  at: Date,
): Promise<CommentRow> {
  requireOpen(thread.visibility);
  await limitWriter(em, "community.comment.person", ctx.settings.commentPerPerson, writerOf(author), at);
  return insertComment(em, thread, author, body, at);
}
