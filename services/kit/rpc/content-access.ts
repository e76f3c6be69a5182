import { create, type MessageInitShape } from "@bufbuild/protobuf";
import type { CallOptions, HandlerContext } from "@connectrpc/connect";
import {
  ContentAccess,
  type ContentAccessRequest,
  type ContentAccessRequestSchema,
  type ContentAccessResult,
  ContentAccessResultSchema,
} from "../../../gen/pf/v1/content_pb.js";
import { personOf, principalOf } from "../auth/principal.js";
import { relayFailure } from "./relay-failure.js";

/**
 * Content access (`proto/pf/v1/content.proto`): what a reader may see of an object another service holds, asked
 * of that service, so whatever hangs off the object (a comment thread) answers as the object does. The owner
 * answers with `contentAccessHandler`; the asker reads its caller with `contentReaderOf` and asks with
 * `askingOwner`, outside any transaction.
 */

/** Whom the owner answers for: the person (`""` for a reader without one) and whether a service vouches them staff. */
export interface ContentReader {
  subject: string;
  staff: boolean;
}

/** What the reader gets of the object: open, missing, or behind the membership of `creator`. */
export type ContentAnswer = { access: "open" } | { access: "not_found" } | { access: "members_only"; creator: string };

export const OPEN: ContentAnswer = { access: "open" };
export const NOT_FOUND: ContentAnswer = { access: "not_found" };

/**
 * The reader whose sight the content's owner is asked about, or undefined for a service acting as itself (no
 * person named): the platform's own calls (an owner's effect, moderation as the service) pass every content
 * gate. Everyone else is asked about: a person (own token, or named by a service; vouched staff flagged), and
 * apps acting for nobody, guests' and anonymous callers as a reader without a person.
 */
export function contentReaderOf(call: HandlerContext): ContentReader | undefined {
  const principal = principalOf(call);
  const subject = personOf(principal);
  if (principal.kind === "service" && subject === undefined) return undefined;
  return { subject: subject ?? "", staff: principal.kind === "service" && principal.staff };
}

/** A client of the CheckContentAccess RPC every owner of gated content implements. */
export interface ContentAccessClient {
  checkContentAccess(
    request: MessageInitShape<typeof ContentAccessRequestSchema>,
    options?: CallOptions,
  ): Promise<ContentAccessResult>;
}

/** How an asker learns what a reader gets of one object of a service, by kind and id. */
export type ContentGate = (kind: string, id: string, reader: ContentReader) => Promise<ContentAnswer>;

/**
 * Asks the owning service (never inside a transaction). Fail-closed: its not answering is 503
 * `<service>.unavailable`, never open; an answer this code does not know is not found.
 */
export function askingOwner(service: string, client: ContentAccessClient): ContentGate {
  return async (kind, id, reader) => {
    let result: ContentAccessResult;
    try {
      result = await client.checkContentAccess({ kind, id, ...reader });
    } catch (error) {
      relayFailure(service, error);
    }
    if (result.access === ContentAccess.OPEN) return OPEN;
    if (result.access === ContentAccess.MEMBERS_ONLY) return { access: "members_only", creator: result.creator };
    return NOT_FOUND;
  };
}

/** An owner's answer for one kind of its objects. */
export type KindAccess = (id: string, reader: ContentReader) => Promise<ContentAnswer>;

/** The owner side: the CheckContentAccess handler answering each kind it names; any other kind is not found. */
export function contentAccessHandler(kinds: Readonly<Record<string, KindAccess>>) {
  return {
    async checkContentAccess(request: ContentAccessRequest): Promise<ContentAccessResult> {
      const reader = { subject: request.subject, staff: request.staff };
      const answer = Object.hasOwn(kinds, request.kind) ? await kinds[request.kind](request.id, reader) : NOT_FOUND;
      return create(ContentAccessResultSchema, {
        access:
          answer.access === "open"
            ? ContentAccess.OPEN
            : answer.access === "members_only"
              ? ContentAccess.MEMBERS_ONLY
              : ContentAccess.NOT_FOUND,
        creator: answer.access === "members_only" ? answer.creator : "",
      });
    },
  };
}
