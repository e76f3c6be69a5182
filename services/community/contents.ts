import type { HandlerContext } from "@connectrpc/connect";
import { BlogContentService } from "../../gen/pf/blog/v1/content_pb.js";
import { NewsContentService } from "../../gen/pf/news/v1/content_pb.js";
import { SpaceContentService } from "../../gen/pf/space/v1/content_pb.js";
import { askingOwner, type ContentGate, contentReaderOf, NOT_FOUND, OPEN } from "../kit/rpc/content-access.js";
import type { ServiceContext } from "../kit/service/module.js";
import type { ThreadRow } from "./db/entities.js";
import { pasteLives } from "./db/pastes.js";
import { commentById, type Ref, threadById } from "./db/threads.js";
import { requireContentOpen, requireReadable } from "./domain/threads.js";
import { readsAsModerator } from "./moderators.js";

/**
 * The content a comment thread belongs to, by its ref's service: blog's posts, news' stories and space's threads
 * asked of their owner (`CheckContentAccess`, the module holds each `<key>.content.check`), community's own
 * pastes from its database. A ref of any other service has no gate: the thread's own visibility alone applies.
 */
export function contentGates(base: ServiceContext): ReadonlyMap<string, ContentGate> {
  const pastes: ContentGate = async (kind, id) =>
    kind === "paste" && (await base.transaction((em) => pasteLives(em, id))) ? OPEN : NOT_FOUND;
  return new Map([
    ["blog", askingOwner("blog", base.client(BlogContentService))],
    ["news", askingOwner("news", base.client(NewsContentService))],
    ["space", askingOwner("space", base.client(SpaceContentService))],
    ["community", pastes],
  ]);
}

/** The part of the community context the checks read (context.ts builds the gates from this file). */
type Gated = ServiceContext & { contents: ReadonlyMap<string, ContentGate> };

/**
 * A thread answers as its content does, to the caller: 404 thread.not_found where the content is missing to
 * them, 403 vip.members_only behind a membership, 503 when the owner does not answer (never open). Asked outside
 * any transaction; a service acting as itself passes (contentReaderOf).
 */
export async function requireContentSeen(ctx: Gated, call: HandlerContext, ref: Ref): Promise<void> {
  const reader = contentReaderOf(call);
  const gate = ctx.contents.get(ref.service);
  if (reader === undefined || gate === undefined) return;
  requireContentOpen(await gate(ref.kind, ref.id, reader));
}

const refOf = (thread: ThreadRow): Ref => ({ service: thread.refService, kind: thread.refKind, id: thread.refId });

/**
 * A thread by id as the caller may reach it: readable (hidden is 404 but to moderators), then its content seen.
 * Read before the caller's transaction (a thread's ref never changes); the caller checks its state again there.
 */
export async function threadSeen(ctx: Gated, call: HandlerContext, id: string): Promise<void> {
  const thread = await ctx.transaction((em) => threadById(em, id));
  requireReadable(thread.visibility, readsAsModerator(call));
  await requireContentSeen(ctx, call, refOf(thread));
}

/** The thread of a comment as the caller may reach it (`threadSeen`); 404 comment.not_found when missing. */
export async function commentThreadSeen(ctx: Gated, call: HandlerContext, commentId: string): Promise<void> {
  const threadId = await ctx.transaction(async (em) => (await commentById(em, commentId)).threadId);
  return threadSeen(ctx, call, threadId);
}
