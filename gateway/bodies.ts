/**
 * The declared place for bindings the JSON path cannot serve, as the
 * architecture allows: multipart uploads (media files, tool jobs, static
 * deploys), raw responses (google.api.HttpBody: files, RSS/Atom/JSON feeds)
 * and server-streaming RPCs as text/event-stream with Last-Event-ID resume.
 *
 * A hook claims bindings by their descriptors (method kind, input or output
 * type) and builds their handler once at startup; the first hook in
 * BODY_HOOKS that claims a binding serves it instead of the JSON handler.
 * A hook that needs a content-type parser (multipart) registers it on the
 * route it builds, so the JSON routes keep JSON-only parsing.
 */
import type { RouteHandlerMethod } from "fastify";
import { problemMessage } from "../services/kit/problem.js";
import type { Binding } from "./bindings.js";
import { instanceOf, sendProblem } from "./problems.js";
import type { RouteContext } from "./routes.js";

export interface BodyHook {
  /** For logs. */
  readonly name: string;
  /** Whether this hook serves the binding. */
  claims(binding: Binding): boolean;
  /** The binding's route handler, built once at startup. */
  handler(binding: Binding, context: RouteContext): RouteHandlerMethod;
}

/** Streaming RPCs are routed (so they are documented and never 404) but not served yet. */
const streamingNotServed: BodyHook = {
  name: "streaming-not-served",
  claims: (binding) => binding.method.methodKind !== "unary",
  handler: () => async (request, reply) =>
    sendProblem(
      reply,
      problemMessage(501, "route.streaming_unsupported", "This streaming RPC is not served over HTTP yet; call it over gRPC or Connect."),
      instanceOf(request),
    ),
};

export const BODY_HOOKS: readonly BodyHook[] = [streamingNotServed];
