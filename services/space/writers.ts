import type { HandlerContext } from "@connectrpc/connect";
import type { Message } from "@bufbuild/protobuf";
import { actingPerson, callerOf, staffActor } from "../kit/auth/principal.js";
import { idempotencyOf } from "../kit/writes/idempotency.js";
import { invalid, problem } from "../kit/handler/problem.js";
import { rateLimit } from "../kit/writes/rate-limit.js";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { SpaceContext } from "./context.js";
import type { AuthorKind, StoredPost } from "./db/posts.js";

/**
 * Who writes, by the access rule that admitted the call: a person (their own
 * token or X-PF-Subject), AI output (X-PF-Origin: ai: no author, labelled AI,
 * credited to the service that sent it), or a moderator (internal routes
 * only: community acting as itself or vouching X-PF-Staff: 1).
 */
export type Writer =
  { kind: "person"; person: string } | { kind: "ai"; service: string } | { kind: "moderator"; actor: string };

/**
 * The writer of a call. X-PF-Origin: ai makes it AI output even beside a
 * person's X-PF-Subject (admitted by the person rule, so the person's
 * visibility bounds where it lands): AI output is never attributed to a person.
 */
export function writerOf(call: HandlerContext): Writer {
  const caller = callerOf(call);
  if (caller.admittedBy === "moderate") return { kind: "moderator", actor: staffActor(call) };
  if (caller.principal.origin === "ai") return { kind: "ai", service: caller.principal.sub };
  return { kind: "person", person: actingPerson(call) };
}

/** A service's token subject, as community forwards the sender of AI output (`ai_service`). */
const SERVICE_SUBJECT = /^svc:[a-z]+$/;

/**
 * The writer of a write community forwards: AI output is credited to the
 * service that sent it to community (`ai_service`), never to community, so
 * one service cannot edit or delete another's AI posts. Only AI output names
 * it (400 naming `ai_service` otherwise, or when it is not a service).
 */
export function forwardedWriterOf(call: HandlerContext, aiService: string): Writer {
  const writer = writerOf(call);
  if (writer.kind !== "ai") {
    if (aiService !== "") throw invalid("ai_service", "Only AI output names the service that sent it.");
    return writer;
  }
  if (!SERVICE_SUBJECT.test(aiService))
    throw invalid("ai_service", "AI output forwarded by community names the service that sent it (svc:<key>).");
  return { kind: "ai", service: aiService };
}

/** A voter: votes are people's only; the access rule refuses AI output (`no_ai_origin`), so this reads the person. */
export function voterOf(call: HandlerContext): Extract<Writer, { kind: "person" }> {
  const writer = writerOf(call);
  if (writer.kind !== "person") throw new Error(`${call.method.name} admits people only`);
  return writer;
}

/** Who is named on what a writer posts: the person, or for AI the service (never shown as a person). */
export function authorOf(writer: Writer): { authorKind: AuthorKind; author: string } {
  if (writer.kind === "person") return { authorKind: "person", author: writer.person };
  if (writer.kind === "ai") return { authorKind: "ai", author: writer.service };
  throw new Error("a moderator writes no posts of their own");
}

/** Whom an event or audit names as acting. */
export function actorOf(writer: Writer): string {
  return writer.kind === "person" ? writer.person : writer.kind === "ai" ? writer.service : writer.actor;
}

/** Only the author edits or deletes a post ("edit or delete one's own posts"); a moderator any. 403 post.not_author. */
export function requireAuthor(writer: Writer, post: Pick<StoredPost, "authorKind" | "author">): void {
  if (writer.kind === "moderator") return;
  const own = authorOf(writer);
  if (own.authorKind !== post.authorKind || own.author !== post.author)
    throw problem(403, "post.not_author", "Only its author may change or delete this post.");
}

/** The limits of a writer's posts and votes ("locks and limits are checked by the service"). */
export function limitWriter(ctx: SpaceContext, em: EntityManager, writer: Writer, what: "post" | "vote") {
  const windowMs = 10 * 60_000;
  const limit = what === "post" ? ctx.settings.postsPer10Min : ctx.settings.votesPer10Min;
  return rateLimit(em, [{ name: `space.${what}.writer`, key: actorOf(writer), limit, windowMs }], ctx.clock.now());
}

/**
 * Moderation notes: reason and relaying service, only from a moderator (400 naming the field for a writer); the
 * contract holds them to their shapes (a reason of at most 500 characters, a service key).
 */
export function moderationNote(
  writer: Writer,
  request: { reason: string; relayedBy: string },
): { reason: string; relayedBy: string } {
  if (writer.kind !== "moderator") {
    if (request.reason !== "") throw invalid("reason", "Only a moderator's action carries a reason.");
    if (request.relayedBy !== "") throw invalid("relayed_by", "Only a moderator's action names a relaying service.");
    return { reason: "", relayedBy: "" };
  }
  return { reason: request.reason, relayedBy: request.relayedBy };
}

/**
 * A write under the call's idempotency key: a retry is answered from what was
 * stored before anything else runs (no gate asked again), then `gate` runs
 * outside any transaction (it may ask vip or network), then `work` in one
 * transaction with the answer stored under the key.
 */
export async function written<T extends Message, G>(
  ctx: SpaceContext,
  call: HandlerContext,
  request: Message,
  options: { scope: string; required?: boolean },
  gate: () => Promise<G>,
  work: (em: EntityManager, gated: G) => Promise<T>,
): Promise<T> {
  const once = idempotencyOf(call, request, options);
  if (once.key !== "") {
    const stored = await ctx.transaction((em) => once.stored<T>(em));
    if (stored) return stored;
  }
  const gated = await gate();
  return ctx.transaction((em) => once.run(em, () => work(em, gated)));
}
