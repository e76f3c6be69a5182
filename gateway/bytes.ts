/**
 * Byte answers (ARCHITECTURE.md "Gateway": raw responses, google.api.HttpBody):
 * the declared hook of RPCs whose binding's `response_body` names a
 * `google.api.HttpBody` field. Server-streaming ones (files) are streamed from
 * the RPC as it reads them; a unary one (a feed, a raw paste: kit/feeds
 * `answerDocument`) answers its one message.
 *
 * - The first message decides: with its HttpBody set, the answer is bytes, of
 *   its `content_type`, each message's `data` in order; without, the answer is
 *   that message as JSON (a read of metadata on the same route).
 * - Status: the handler's `answerStatus` (206, 304), else the first declared;
 *   304 and HEAD go without a body (HEAD with the Content-Length a GET would have).
 * - Headers: the handler's ETag, Cache-Control, Content-Disposition,
 *   Content-Range, Accept-Ranges, Content-Security-Policy and Last-Modified,
 *   and `pf-content-length` as Content-Length; `X-Content-Type-Options: nosniff`
 *   on every byte answer, so a browser never sniffs a type.
 * - A problem before the first message is a plain problem+json; a failure
 *   after the bytes began ends the connection (a client sees a short body).
 * - Backpressure: the next message is read once the client took the last; the
 *   client going away cancels the RPC.
 */
import { getOption, type DescMethodServerStreaming, type DescMethodUnary, type Message } from "@bufbuild/protobuf";
import type { RouteHandlerMethod } from "fastify";
import { Readable } from "node:stream";
import type { HttpBody } from "../gen/google/api/httpbody_pb.js";
import { success_statuses as successStatuses } from "../gen/pf/v1/options_pb.js";
import { CONTENT_LENGTH_HEADER } from "../services/kit/blobs/store.js";
import { STATUS_HEADER } from "../services/kit/handler/status.js";
import type { Binding } from "./bindings.js";
import { COPIED_RESPONSE_HEADERS, forwardedHeaders } from "./headers.js";
import { admittedRequest } from "./admission.js";
import { sendFailure } from "./problems.js";
import { requestMapper } from "./request.js";
import { resultRenderer } from "./response.js";
import type { RouteContext } from "./route-context.js";

/** Headers of a byte answer copied from the handler's, besides those of every answer. */
const BYTE_HEADERS = [
  ...COPIED_RESPONSE_HEADERS,
  "content-disposition",
  "content-range",
  "accept-ranges",
  "content-security-policy",
  "last-modified",
];

/** Whether a binding answers bytes: unary or server streaming, its response_body a google.api.HttpBody. */
export function answersBytes(binding: Binding): boolean {
  const kind = binding.method.methodKind;
  return (
    (kind === "server_streaming" || kind === "unary") &&
    binding.responseField?.message?.typeName === "google.api.HttpBody"
  );
}

/** The handler of a byte-answer binding: request → input message → stream → bytes (or the first message as JSON). */
export function byteHandler(binding: Binding, context: RouteContext): RouteHandlerMethod {
  const toMessage = requestMapper(binding, context.registry);
  const method = binding.method as DescMethodServerStreaming | DescMethodUnary;
  const bodyOf = (message: Message) =>
    (message as unknown as Record<string, HttpBody | undefined>)[binding.responseField!.localName];
  const renderWhole = resultRenderer({ ...binding, responseField: undefined }, context.registry);
  const declared = getOption(method, successStatuses)[0] ?? 200;
  const { transport, logger } = context;
  return async (request, reply) => {
    const cancel = new AbortController();
    reply.raw.once("close", () => cancel.abort());
    let messages: AsyncIterator<Message>;
    let first: IteratorResult<Message>;
    let header: Headers;
    try {
      const input = toMessage(request);
      let response: { header: Headers; message: AsyncIterable<Message> };
      if (method.methodKind === "unary") {
        // As the JSON path calls it: the headers admission saw, and its outcome.
        const admitted = admittedRequest(request);
        const header = admitted?.headers ?? forwardedHeaders(request);
        const answer = await transport.unary(method, cancel.signal, context.timeoutMs, header, input, admitted?.values);
        response = { header: answer.header, message: single(answer.message) };
      } else {
        response = await transport.stream(
          method,
          cancel.signal,
          context.timeoutMs,
          forwardedHeaders(request),
          single(input),
        );
      }
      messages = response.message[Symbol.asyncIterator]();
      first = await messages.next();
      if (first.done) throw new Error(`${method.name} answered no message`);
      header = response.header;
    } catch (error) {
      cancel.abort();
      return sendFailure(request, reply, error, logger);
    }
    const status = Number(header.get(STATUS_HEADER) ?? declared);
    const body = bodyOf(first.value);
    if (!body) {
      void messages.return?.();
      return reply.code(status).type("application/json").send(renderWhole(first.value));
    }
    for (const name of BYTE_HEADERS) {
      const value = header.get(name);
      if (value !== null) reply.header(name, value);
    }
    const length = header.get(CONTENT_LENGTH_HEADER);
    if (length !== null) reply.header("content-length", length);
    reply
      .code(status)
      .header("x-content-type-options", "nosniff")
      .type(body.contentType || "application/octet-stream");
    if (status === 304 || request.method === "HEAD") {
      void messages.return?.();
      // Fastify's HEAD route answers no payload as Content-Length: 0; an empty stream keeps the length the RPC gave.
      return reply.send(request.method === "HEAD" ? Readable.from([]) : undefined);
    }
    async function* bytes() {
      try {
        yield* slices(body!.data);
        for (let next = await messages.next(); !next.done; next = await messages.next()) {
          const data = bodyOf(next.value)?.data;
          if (data && data.length > 0) yield* slices(data);
        }
      } finally {
        cancel.abort();
      }
    }
    const stream = Readable.from(bytes(), { objectMode: false });
    stream.on("error", (error) => {
      if (!cancel.signal.aborted) logger.error({ err: error, requestId: request.id }, "byte answer failed");
      reply.raw.destroy();
    });
    return reply.send(stream);
  };
}

/** Bytes written at once at most: a 2 MB feed goes out in turns with other answers, never in one long write. */
const SLICE_BYTES = 64 * 1024;

function* slices(data: Uint8Array) {
  for (let start = 0; start < data.length; start += SLICE_BYTES) yield data.subarray(start, start + SLICE_BYTES);
}

async function* single(message: Message) {
  yield message;
}
