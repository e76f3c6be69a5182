import type { Socket } from "node:net";
import type { IncomingMessage } from "node:http";
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from "fastify";
import { problemMessage } from "../services/kit/handler/problem.js";
import { instanceOf, sendProblem } from "./problems.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The route reads its body as it arrives (uploads, client streams) and watches its pace itself. */
    streamsBody?: boolean;
  }
}

/** The longest a refused request's connection reads what its client still sends (nginx's lingering_time is 30 s). */
export const LINGER_MS = 10_000;
/** A lingering connection closes once its client sent nothing for this long (nginx's lingering_timeout). */
export const LINGER_IDLE_MS = 2_000;

/** Whether the request announces a body. */
function sendsBody(request: FastifyRequest): boolean {
  const length = request.headers["content-length"];
  return (length !== undefined && length !== "0") || request.headers["transfer-encoding"] !== undefined;
}

/**
 * A request answered before its body was read (a refusal: 401, 403, 404, 413, …) closes its connection after the
 * answer, as nginx's lingering close does: the answer goes out with `Connection: close`, the gateway's side is shut
 * once it is written, and what the client still sends is read and thrown away until it stops for LINGER_IDLE_MS,
 * closes, or LINGER_MS pass. Closing at once resets a connection the client is still writing to, and a client that
 * writes its whole body before it reads (Node's fetch) then sees EPIPE instead of the answer.
 */
export function closeAfterAnswer(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (!sendsBody(request) || request.raw.complete) return reply;
  const socket = request.raw.socket;
  // Node ends a `Connection: close` answer with destroySoon(): shut, then destroyed as soon as the answer is written.
  socket.destroySoon = () => linger(socket, request.raw);
  return reply.header("connection", "close");
}

/** Closes a connection whose body must not be waited for (a body too slow): at once, after the answer. */
export function closeAtOnce(reply: FastifyReply): FastifyReply {
  return reply.header("connection", "close");
}

function linger(socket: Socket, incoming: IncomingMessage): void {
  socket.end();
  // The rest of the body flows into nothing (a refused upload stopped reading it).
  incoming.resume();
  const close = () => socket.destroy();
  const longest = setTimeout(close, LINGER_MS);
  longest.unref();
  socket.setTimeout(LINGER_IDLE_MS, close);
  socket.once("close", () => clearTimeout(longest));
}

/**
 * A body must have arrived `timeoutMs` after its request began; a body sent a
 * byte a second is answered 408 and its connection closed, not waited for.
 */
export function bodyDeadline(timeoutMs: number): onRequestHookHandler {
  return (request, reply, done) => {
    // A route reading its body as it arrives (uploads.ts) watches its pace instead.
    const streams = request.routeOptions.config.streamsBody === true;
    if (sendsBody(request) && !streams) {
      const timer = setTimeout(() => {
        if (reply.sent) return;
        sendProblem(
          closeAtOnce(reply),
          problemMessage(408, "request.timeout", `The body did not arrive within ${timeoutMs} ms.`),
          instanceOf(request),
        );
      }, timeoutMs);
      timer.unref();
      const clear = () => clearTimeout(timer);
      request.raw.once("end", clear);
      request.raw.once("close", clear);
    }
    done();
  };
}
