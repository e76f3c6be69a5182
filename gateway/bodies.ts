/**
 * The declared place for bindings the JSON path cannot serve, as the
 * architecture allows: streamed multipart and raw uploads (uploads.ts: media
 * files, tool jobs, static deploys), byte answers (bytes.ts: google.api.HttpBody
 * files, feeds), server-streaming RPCs as text/event-stream with
 * Last-Event-ID resume (sse.ts) and bidirectional-streaming RPCs bound to GET
 * as WebSockets (websocket.ts).
 *
 * A hook claims bindings by their descriptors (method kind, input or output
 * type) and builds their handler once at startup; the first hook in
 * BODY_HOOKS that claims a binding serves it instead of the JSON handler.
 * A hook that needs something of its own for its routes (content-type parsers
 * for multipart and raw bytes, the WebSocket plugin) declares it; its routes
 * get it in one encapsulated scope of their own, so the JSON routes keep
 * JSON-only parsing and plain HTTP.
 */
import { ScalarType } from "@bufbuild/protobuf";
import type { FastifyInstance, RouteHandlerMethod, RouteOptions } from "fastify";
import { problemMessage } from "../services/kit/handler/problem.js";
import { servedAsWebSocket, type Binding } from "./bindings.js";
import { instanceOf, sendProblem } from "./problems.js";
import type { RouteContext } from "./route-context.js";
import { answersBytes, byteHandler } from "./bytes.js";
import { eventStreamHandler } from "./sse.js";
import { uploadHandler, uploadOf, uploadParsers } from "./uploads.js";
import { webSocketRoute, webSocketScope } from "./websocket.js";

export interface BodyHook {
  /** For logs. */
  readonly name: string;
  /** Whether this hook serves the binding. */
  claims(binding: Binding): boolean;
  /** The binding's route handler, built once at startup; without it (or `route`) the JSON handler serves it. */
  handler?(binding: Binding, context: RouteContext): RouteHandlerMethod;
  /** Instead of `handler`: the route's handler and the hooks of its own it needs (a WebSocket's). */
  route?(binding: Binding, context: RouteContext): Pick<RouteOptions, "handler" | "preHandler" | "wsHandler">;
  /** What the hook's routes need (content-type parsers, a plugin), set up in the one scope they share. */
  scope?(scope: FastifyInstance, context: RouteContext): void | Promise<void>;
  /** Its handler reads the body as it arrives, under its own idle deadline instead of the whole-body one. */
  readonly streamsBody?: boolean;
}

/** RPCs (unary or server-streaming) whose response_body is a google.api.HttpBody, answered as bytes (see bytes.ts). */
const byteAnswers: BodyHook = {
  name: "byte-answers",
  claims: answersBytes,
  handler: byteHandler,
};

/** Client-streaming RPCs with (pf.v1.upload): multipart or raw bodies streamed in (see uploads.ts). */
const streamedUpload: BodyHook = {
  name: "streamed-upload",
  claims: (binding) => uploadOf(binding) !== undefined,
  streamsBody: true,
  handler: uploadHandler,
  scope: uploadParsers,
};

/** Server-streaming RPCs, served as text/event-stream (see sse.ts). */
const serverStreamingEvents: BodyHook = {
  name: "server-streaming-events",
  claims: (binding) => binding.method.methodKind === "server_streaming",
  handler: eventStreamHandler,
};

/** Bidirectional-streaming RPCs bound to GET, served as WebSockets (see websocket.ts). */
const webSockets: BodyHook = {
  name: "websocket",
  claims: servedAsWebSocket,
  route: webSocketRoute,
  scope: webSocketScope,
};

/**
 * Other client and bidi streaming RPCs are routed (so they are documented and
 * never 404) but not served: an HTTP/1.1 JSON request cannot stream messages in.
 */
const streamingNotServed: BodyHook = {
  name: "streaming-not-served",
  claims: (binding) =>
    binding.method.methodKind === "client_streaming" || binding.method.methodKind === "bidi_streaming",
  handler: () => async (request, reply) =>
    sendProblem(
      reply,
      problemMessage(
        501,
        "route.streaming_unsupported",
        "This client-streaming RPC is not served over HTTP; call it over gRPC or Connect.",
      ),
      instanceOf(request),
    ),
};

/** Whether a binding's body fills one bytes field: its raw bytes, whatever their media type. */
export function takesRawBytes(binding: Binding): boolean {
  return binding.bodyField?.fieldKind === "scalar" && binding.bodyField.scalar === ScalarType.BYTES;
}

/**
 * A body that fills one bytes field (provider webhooks, whose signature covers
 * the exact bytes): any content type, or none, is taken as raw bytes, handed
 * to the JSON handler as the base64 text proto JSON reads a bytes field from.
 */
const rawBytesBody: BodyHook = {
  name: "raw-bytes-body",
  claims: takesRawBytes,
  scope(scope) {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) =>
      done(null, (body as Buffer).toString("base64")),
    );
  },
};

export const BODY_HOOKS: readonly BodyHook[] = [
  byteAnswers,
  serverStreamingEvents,
  streamedUpload,
  webSockets,
  streamingNotServed,
  rawBytesBody,
];
