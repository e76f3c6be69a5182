/**
 * Server-streaming RPCs as `text/event-stream` (ARCHITECTURE.md, "Gateway"):
 * each response message is one event whose `data:` is its proto JSON, read
 * from the descriptors like every JSON route.
 *
 * - `id:` is the message's top-level string field `id`, when it has one and it
 *   is set; a reconnecting client sends it back as Last-Event-ID, which is
 *   forwarded to the RPC (the RPC decides what resuming means).
 * - `event:` is the proto name of the set member of a top-level oneof named
 *   `event`, when the message has one; otherwise clients read `message` events.
 * - A problem before the first message is answered as a plain problem+json
 *   with its status; one after it is an `event: error` carrying the problem,
 *   then the stream closes.
 * - The client going away cancels the RPC (its AbortSignal).
 * - A comment line every `heartbeatMs` keeps proxies from closing an idle stream.
 * - Backpressure: the next message is read from the RPC once the client has
 *   taken the last one (the body drained), so a slow client never fills memory.
 * - Closing the gateway ends every open stream (clients reconnect elsewhere).
 */
import {
  toJson,
  type DescField,
  type DescMessage,
  type DescMethodServerStreaming,
  type DescOneof,
  type Message,
  type Registry,
} from "@bufbuild/protobuf";
import type { RouteHandlerMethod } from "fastify";
import { PassThrough } from "node:stream";
import { problemOf } from "../services/kit/handler/problem.js";
import type { Binding } from "./bindings.js";
import { forwardedHeaders } from "./headers.js";
import { instanceOf, problemJson, sendFailure } from "./problems.js";
import { requestMapper } from "./request.js";
import type { RouteContext } from "./route-context.js";

/** How often an open stream gets a keep-alive comment when the RPC's context does not say. */
export const DEFAULT_HEARTBEAT_MS = 15_000;

export const EVENT_STREAM_CONTENT_TYPE = "text/event-stream";

/** One message as an SSE event: its `id:` and `event:` lines (when it has them) and one `data:` line. */
export type EventRenderer = (message: Message) => string;

export function eventRenderer(output: DescMessage, registry: Registry): EventRenderer {
  const options = { useProtoFieldName: true, alwaysEmitImplicit: true, registry };
  const idField = output.fields.find(
    (field) => field.name === "id" && field.fieldKind === "scalar" && field.oneof === undefined,
  );
  const eventOneof = output.oneofs.find((oneof) => oneof.name === "event");
  return (message) => {
    const id = idField ? idOf(message, idField) : "";
    const event = eventOneof ? eventOf(message, eventOneof) : "";
    return `${id ? `id: ${id}\n` : ""}${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(toJson(output, message, options))}\n\n`;
  };
}

function idOf(message: Message, field: DescField): string {
  const value = (message as unknown as Record<string, unknown>)[field.localName];
  const text = typeof value === "string" || typeof value === "bigint" || typeof value === "number" ? String(value) : "";
  // A line break or NUL would end the field early (and NUL makes clients drop the id).
  return /[\r\n\0]/.test(text) ? "" : text;
}

function eventOf(message: Message, oneof: DescOneof): string {
  const set = (message as unknown as Record<string, { case?: string }>)[oneof.localName]?.case;
  return oneof.fields.find((field) => field.localName === set)?.name ?? "";
}

/** The handler of a server-streaming binding: request → input message → stream → events. */
export function eventStreamHandler(binding: Binding, context: RouteContext): RouteHandlerMethod {
  const toMessage = requestMapper(binding, context.registry);
  const method = binding.method as DescMethodServerStreaming;
  const render = eventRenderer(method.output, context.registry);
  const { transport, logger } = context;
  const heartbeatMs = context.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  const open = context.openStreams ?? new Set<AbortController>();
  return async (request, reply) => {
    const cancel = new AbortController();
    open.add(cancel);
    cancel.signal.addEventListener("abort", () => open.delete(cancel), { once: true });
    // Also before the first message: a client gone while the RPC prepares cancels it.
    reply.raw.once("close", () => cancel.abort());
    let messages: AsyncIterator<Message>;
    let first: IteratorResult<Message>;
    try {
      const input = toMessage(request);
      // No deadline: a stream lasts until it ends, fails, or the client goes away.
      const response = await transport.stream(
        method,
        cancel.signal,
        undefined,
        forwardedHeaders(request),
        single(input),
      );
      messages = response.message[Symbol.asyncIterator]();
      // The status is decided by the first message: a refusal before it is a plain problem.
      first = await messages.next();
    } catch (error) {
      cancel.abort();
      return sendFailure(request, reply, error, logger);
    }
    const body = new PassThrough();
    const write = (text: string) => {
      if (!body.writableEnded) body.write(text);
    };
    // A client reading slowly slows the RPC down (the next message is asked for once the body drains), never fills memory.
    const send = (text: string) =>
      body.writableEnded || body.write(text)
        ? undefined
        : new Promise<void>((resolve) => {
            const done = () => {
              body.off("drain", done);
              cancel.signal.removeEventListener("abort", done);
              resolve();
            };
            body.once("drain", done);
            cancel.signal.addEventListener("abort", done, { once: true });
          });
    // Only an idle stream needs keeping alive: one with output still queued is not idle.
    const heartbeat = setInterval(() => body.writableLength === 0 && write(": keep-alive\n\n"), heartbeatMs);
    // Ended here, not only when the RPC notices: a cancelled RPC may not answer its pending read.
    cancel.signal.addEventListener(
      "abort",
      () => {
        clearInterval(heartbeat);
        body.end();
        void messages.return?.().catch(() => undefined);
      },
      { once: true },
    );
    void (async () => {
      try {
        for (let next = first; !next.done && !cancel.signal.aborted; next = await messages.next())
          await send(render(next.value));
      } catch (error) {
        if (cancel.signal.aborted) return;
        const found = problemOf(error);
        if (found.status >= 500)
          logger.error({ err: error, requestId: request.id, path: instanceOf(request) }, "event stream failed");
        write(`event: error\ndata: ${JSON.stringify(problemJson(found, instanceOf(request)))}\n\n`);
      } finally {
        cancel.abort();
      }
    })();
    return (
      reply
        .code(200)
        .header("content-type", `${EVENT_STREAM_CONTENT_TYPE}; charset=utf-8`)
        .header("cache-control", "no-store")
        // Reverse proxies (nginx) must pass each event on at once, not buffer the stream.
        .header("x-accel-buffering", "no")
        // An ended stream's connection is not reused: its client reconnects on a new one.
        .header("connection", "close")
        .send(body)
    );
  };
}

async function* single(message: Message) {
  yield message;
}
