import { toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { createHash } from "node:crypto";
import { answerStatus } from "../kit/handler/status.js";

/**
 * Answers a discovery read with a strong ETag of its content and a short public Cache-Control; a reader whose
 * If-None-Match names it gets 304 without a body (the RPC declares 200 and 304). Discovery holds public items only,
 * the same for every caller, so shared caches may keep it.
 */
export function answerCached<Desc extends DescMessage>(
  call: HandlerContext,
  schema: Desc,
  message: MessageShape<Desc>,
  maxAgeSeconds: number,
): MessageShape<Desc> {
  const etag = `"${createHash("sha256").update(toBinary(schema, message)).digest("base64url").slice(0, 32)}"`;
  call.responseHeader.set("etag", etag);
  call.responseHeader.set("cache-control", `public, max-age=${maxAgeSeconds}`);
  const asked = call.requestHeader.get("if-none-match");
  if (asked?.split(",").some((tag) => tag.trim().replace(/^W\//, "") === etag)) answerStatus(call, 304);
  return message;
}
