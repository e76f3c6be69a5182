import { create, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { createHash } from "node:crypto";
import { HttpBodySchema, type HttpBody } from "../../../gen/google/api/httpbody_pb.js";
import { answerStatus } from "../handler/status.js";
import { ByteLru } from "../runtime/byte-lru.js";

/** A document a read RPC answers as bytes (a feed, a raw paste). */
export interface DocumentAnswer {
  /** With its charset for text (`text/plain; charset=utf-8`). */
  contentType: string;
  body: string | Uint8Array;
  /** Cache-Control max-age for shared caches (`feedMaxAgeSeconds`); 0 asks every reader to revalidate. */
  maxAgeSeconds: number;
}

/**
 * Answers a document from a read RPC as `google.api.HttpBody` (the gateway
 * sends its bytes with its content type: gateway/bytes.ts, for unary and
 * server-streaming RPCs alike), with a strong ETag of its bytes and
 * `Cache-Control: public, max-age=…`. A request whose If-None-Match names that
 * ETag is answered 304 without the body: the RPC declares 304 among its
 * success statuses (`pf.v1.success_statuses: [200, 304]`). Only for
 * documents anyone may read: `public` lets shared caches keep it.
 */
export function answerDocument(call: HandlerContext, answer: DocumentAnswer): HttpBody {
  const data = typeof answer.body === "string" ? new TextEncoder().encode(answer.body) : answer.body;
  const etag = digestOf(data);
  return create(HttpBodySchema, {
    contentType: answer.contentType,
    ...(notModified(call, answer, etag) ? {} : { data }),
  });
}

/**
 * Answers a read RPC's message (JSON over the gateway) as `answerDocument` answers bytes: a strong ETag of its binary
 * encoding, `Cache-Control: public, max-age=…`, and 304 without a body for a reader whose If-None-Match names it (the
 * RPC declares 200 and 304). Only for answers that are the same for every reader (live's discovery).
 */
export function answerMessage<Desc extends DescMessage>(
  call: HandlerContext,
  schema: Desc,
  message: MessageShape<Desc>,
  maxAgeSeconds: number,
): MessageShape<Desc> {
  notModified(call, { maxAgeSeconds }, digestOf(toBinary(schema, message)));
  return message;
}

/** A document whose ETag is known before its bytes are made (a feed). */
export interface VersionedDocument {
  contentType: string;
  maxAgeSeconds: number;
  /**
   * Names everything the bytes depend on (ids, immutable revision numbers, update times, settings, the format):
   * the same version always makes the same bytes, and any change that changes them changes it.
   */
  version: string;
  /** Makes the bytes: only when neither the reader (If-None-Match) nor this process holds them. */
  make: () => Promise<string>;
}

/** Documents made by `answerVersioned`, by ETag: 32 MiB at most in the process. */
const documents = new ByteLru<Uint8Array>(32 * 1024 * 1024);
const making = new Map<string, Promise<Uint8Array>>();

/**
 * Answers a document as `answerDocument` does, with its ETag the digest of its version, known before any work:
 * a request naming it is answered 304 without the document being made, and the documents made are kept (bounded,
 * by ETag) so readers of one version, at once or one after another, have it made once.
 */
export async function answerVersioned(call: HandlerContext, document: VersionedDocument): Promise<HttpBody> {
  const etag = digestOf(new TextEncoder().encode(`${document.contentType}\n${document.version}`));
  if (notModified(call, document, etag)) return create(HttpBodySchema, { contentType: document.contentType });
  const data = documents.get(etag) ?? (await made(etag, document.make));
  return create(HttpBodySchema, { contentType: document.contentType, data });
}

async function made(etag: string, make: () => Promise<string>): Promise<Uint8Array> {
  let pending = making.get(etag);
  if (!pending) {
    pending = make()
      .then((body) => {
        const data = new TextEncoder().encode(body);
        documents.set(etag, data);
        return data;
      })
      .finally(() => making.delete(etag));
    making.set(etag, pending);
  }
  return pending;
}

/** Sets the document's ETag and Cache-Control; answers 304 (and true) when If-None-Match names the ETag. */
function notModified(call: HandlerContext, answer: { maxAgeSeconds: number }, etag: string): boolean {
  call.responseHeader.set("etag", etag);
  call.responseHeader.set("cache-control", `public, max-age=${answer.maxAgeSeconds}`);
  if (!matches(call.requestHeader.get("if-none-match"), etag)) return false;
  answerStatus(call, 304);
  return true;
}

/** A strong ETag: the first 32 characters of the bytes' sha256. */
function digestOf(data: Uint8Array): string {
  return `"${createHash("sha256").update(data).digest("base64url").slice(0, 32)}"`;
}

/** If-None-Match compares weakly (RFC 9110 §13.1.2): `W/"x"` matches `"x"`; `*` matches any. */
function matches(header: string | null, etag: string): boolean {
  if (!header) return false;
  return header.split(",").some((each) => {
    const tag = each.trim().replace(/^W\//, "");
    return tag === "*" || tag === etag;
  });
}

/**
 * The offered media type the request's Accept prefers (q-values, then the
 * order of `offered`); the first offered when Accept is absent or names none
 * of them. Wildcards (`*\/*`, `application/*`) count for every offer they
 * cover, at their q. The gateway forwards Accept to the RPC.
 */
export function preferredType(call: HandlerContext, offered: readonly [string, ...string[]]): string {
  const accept = call.requestHeader.get("accept");
  if (!accept) return offered[0];
  const ranges = accept.split(",").map((part) => {
    const [range, ...parameters] = part.split(";").map((each) => each.trim().toLowerCase());
    const q = parameters.find((each) => each.startsWith("q="));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    return { range, q: Number.isFinite(weight) ? weight : 0 };
  });
  let best = offered[0];
  let bestQ = -1;
  for (const type of offered) {
    const q = qualityOf(type.toLowerCase(), ranges);
    if (q > bestQ) [best, bestQ] = [type, q];
  }
  return bestQ > 0 ? best : offered[0];
}

/** The q of the most specific range covering `type`, 0 when none does. */
function qualityOf(type: string, ranges: { range: string; q: number }[]): number {
  const [major] = type.split("/");
  const exact = ranges.find((each) => each.range === type);
  if (exact) return exact.q;
  const group = ranges.find((each) => each.range === `${major}/*`);
  if (group) return group.q;
  return ranges.find((each) => each.range === "*/*")?.q ?? 0;
}
