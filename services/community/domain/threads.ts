import { invalid, problem } from "../../kit/handler/problem.js";
import type { ContentAnswer } from "../../kit/rpc/content-access.js";

/** A thread's visibility (the spec's three; the contract's rule admits only these). */
export type ThreadVisibility = "public" | "hidden" | "locked";

/** A hidden thread is missing to everyone but moderators. */
export function requireReadable(visibility: string, moderator: boolean): void {
  if (visibility === "hidden" && !moderator) throw threadNotFound();
}

/** New comments and votes: none in a locked thread (409), none in a hidden one (404, as if missing). */
export function requireOpen(visibility: string): void {
  if (visibility === "hidden") throw threadNotFound();
  if (visibility === "locked")
    throw problem(409, "thread.locked", "The thread is locked: it takes no new comments or votes.");
}

export const threadNotFound = () => problem(404, "thread.not_found", "No such comment thread.");

/** A thread answers as its content does: missing where the content is, behind the membership the content is behind. */
export function requireContentOpen(answer: ContentAnswer): void {
  if (answer.access === "not_found") throw threadNotFound();
  if (answer.access === "members_only")
    throw problem(
      403,
      "vip.members_only",
      "The thread's content is for members: it needs a membership of its creator.",
      {
        creator: answer.creator,
      },
    );
}

/** The type of an EntityRef as the browser allow-list names it. */
export const refType = (ref: { service: string; kind: string }) => `${ref.service}/${ref.kind}`;

const REF_PART = /^[a-z][a-z0-9_.-]{0,39}$/;

/** An EntityRef a caller sends: service and kind as keys, an id of 1-128 visible characters. */
export function requireRef(
  field: string,
  ref: { service: string; kind: string; id: string } | undefined,
  names = { service: `${field}.service`, kind: `${field}.kind`, id: `${field}.id` },
): { service: string; kind: string; id: string } {
  if (!ref) throw invalid(field, `${field} is required`);
  if (!REF_PART.test(ref.service)) throw invalid(names.service, "service is a service key");
  if (!REF_PART.test(ref.kind)) throw invalid(names.kind, "kind is a lowercase name");
  if (!/^[\x21-\x7e]{1,128}$/.test(ref.id)) throw invalid(names.id, "id is 1 to 128 visible characters");
  return { service: ref.service, kind: ref.kind, id: ref.id };
}
