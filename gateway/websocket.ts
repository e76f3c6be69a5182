/**
 * Bidirectional-streaming RPCs with a GET binding, served as WebSockets on the
 * gateway's port (`@fastify/websocket` over `ws`): bot's device link and
 * operator channel. One generic bridge, read from the descriptors:
 *
 * - Admitted before the upgrade, as every route (admission.ts: 401, 403, 429
 *   as problem+json), with the headers every route forwards (a credential the
 *   rule declares, `credential_headers`, among them). A browser page on an
 *   origin the route's CORS does not answer is refused (403).
 * - The gateway then opens the RPC and waits for its first message: a problem
 *   before it is answered as plain HTTP (the socket never upgrades); once it
 *   is there, the upgrade completes and it is the first WebSocket message. A
 *   first message not there within the call deadline is 504.
 * - Path variables and query parameters fill the request's envelope (its
 *   top-level fields outside any oneof: `ControlFrame.robot_id`) and, when the
 *   request gives any, make the first request message, which the RPC reads
 *   before it answers (so it may refuse it before the upgrade); without them
 *   the client's first frame says it. What a frame is (its oneof) only comes
 *   in frames: any other query parameter is 400.
 * - Each WebSocket message is one RPC message as proto JSON text (snake_case
 *   field names, every field written), at most 1 MiB either way.
 * - Close codes: 1000 when the RPC ends; 4000 + the problem's HTTP status when
 *   it fails (4400, 4403, 4409, 4500…), the reason starting with the problem
 *   code (`bot.device.revoked: …`); 1003 for a binary message and 1007 for a
 *   text one that is not the request type's proto JSON (reason
 *   `request.invalid: …`); 1009 for a message over 1 MiB (from the client:
 *   `ws` closes it; from the RPC: the gateway does); 1001 when the gateway
 *   closes. A client's close ends the request stream and cancels the call.
 * - Pings every `webSocketPingMs`; a socket that did not answer the previous
 *   one by the next is cut (its client sees 1006) and its call cancelled.
 * - Backpressure: the socket stops being read while READ_AHEAD client frames
 *   wait for the RPC, and the next RPC message is read only once fewer than
 *   WRITE_AHEAD bytes wait for the client. Nothing is buffered unboundedly.
 */
import type { DescMethodBiDiStreaming, JsonValue, Message } from "@bufbuild/protobuf";
import websocket from "@fastify/websocket";
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from "fastify";
import type { RawData, WebSocket, WebSocketServer } from "ws";
import type { Problem } from "../gen/pf/v1/problem_pb.js";
import { invalid, problem, problemMessage, problemOf } from "../services/kit/handler/problem.js";
import { admittedRequest } from "./admission.js";
import type { Binding } from "./bindings.js";
import { decode } from "./decode.js";
import { forwardedHeaders } from "./headers.js";
import { jsonShapeFault } from "./json-shape.js";
import { instanceOf, sendFailure, sendProblem } from "./problems.js";
import { pathAndQueryMapper, requestFields } from "./request.js";
import { resultRenderer } from "./response.js";
import type { RouteContext } from "./route-context.js";

/** The largest WebSocket message either way (the device link's 1 MiB frames). */
export const WEBSOCKET_MAX_PAYLOAD = 1024 * 1024;

/** How often an open WebSocket is pinged when the route context does not say. */
const DEFAULT_PING_MS = 25_000;

/** The close codes the bridge uses besides `closeCodeOf` (RFC 6455 §7.4.1). */
export const CLOSE = {
  normal: 1000,
  goingAway: 1001,
  unsupportedData: 1003,
  invalidPayload: 1007,
  tooBig: 1009,
} as const;

/** The close code of an RPC failing after the upgrade: 4000 + its problem's HTTP status. */
function closeCodeOf(status: number): number {
  return 4000 + (status >= 400 && status <= 599 ? status : 500);
}

/** Client frames read ahead of the RPC before the socket stops being read. */
const READ_AHEAD = 8;
/** Bytes waiting for the client before the next RPC message is read. */
const WRITE_AHEAD = 256 * 1024;
/** Messages sent before the bridge lets the gateway's other connections have a turn. */
const TURN = 32;
/** How long a closed socket's client has to answer the close before the connection is cut. */
const CLOSE_GRACE_MS = 1_000;
/** A close reason is at most 123 bytes of UTF-8. */
const REASON_BYTES = 123;

/** A call opened before the upgrade, with its first message, waiting for the socket. */
interface OpenedCall {
  readonly cancel: AbortController;
  readonly frames: Frames;
  readonly messages: AsyncIterator<Message>;
  readonly first: IteratorResult<Message>;
}

const opened = new WeakMap<FastifyRequest, OpenedCall>();

/**
 * What a WebSocket binding's routes need in their scope: the plugin (one
 * `ws` server for every such route, 1 MiB messages, no compression: a
 * compressor per socket would cost far more memory than an idle link) and
 * the pings.
 */
export async function webSocketScope(scope: FastifyInstance, context: RouteContext): Promise<void> {
  await scope.register(websocket, {
    options: { maxPayload: WEBSOCKET_MAX_PAYLOAD, perMessageDeflate: false },
    // A protocol error (a message over the limit, bad UTF-8) is closed by `ws` with its code; the close ends the call.
    errorHandler: (error) => context.logger.debug({ err: error }, "websocket error"),
    // The calls end with the gateway (openStreams, 1001); a client that does not answer the close is cut.
    preClose(done) {
      for (const socket of scope.websocketServer.clients) {
        socket.close(CLOSE.goingAway, "The gateway is closing.");
        setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
      }
      done();
    },
  });
  pingEvery(scope, scope.websocketServer, context.webSocketPingMs ?? DEFAULT_PING_MS);
}

/**
 * Pings every socket each interval, and cuts one from which nothing came since the previous ping: neither its pong
 * nor a message (a pong queued behind the client's own frames comes late, its frames prove it is there).
 */
function pingEvery(scope: FastifyInstance, server: WebSocketServer, intervalMs: number): void {
  const answered = new WeakSet<WebSocket>();
  // One listener for every socket (`this` is the socket), not a closure each idle link would hold.
  function heard(this: WebSocket) {
    answered.add(this);
  }
  server.on("connection", (socket: WebSocket) => {
    answered.add(socket);
    socket.on("pong", heard);
    socket.on("message", heard);
  });
  const timer = setInterval(() => {
    for (const socket of server.clients) {
      // A paused socket is not read (the RPC is behind): its pong waits unread, it is not missing.
      if (socket.isPaused) continue;
      if (!answered.delete(socket)) socket.terminate();
      else socket.ping();
    }
  }, intervalMs);
  timer.unref();
  scope.addHook("onClose", (_instance, done) => {
    clearInterval(timer);
    done();
  });
}

/** A WebSocket binding's route: the call opened before the upgrade, the bridge after it, 426 without an upgrade. */
export function webSocketRoute(
  binding: Binding,
  context: RouteContext,
): Pick<RouteOptions, "handler" | "preHandler" | "wsHandler"> {
  const method = binding.method as DescMethodBiDiStreaming;
  const { registry, transport, timeoutMs, logger } = context;
  const open = context.openStreams ?? new Set<AbortController>();
  const envelope = pathAndQueryMapper(binding, registry);
  // A route's path variables are always given; its query parameters when the client says them.
  const givesEnvelope =
    requestFields(binding).path.length > 0
      ? () => true
      : (request: FastifyRequest) => Object.keys(request.query as object).length > 0;
  const render = resultRenderer(binding, registry);
  const typeName = method.input.typeName;
  const decodeFrame = (text: string): Message => {
    const fault = jsonShapeFault(text);
    if (fault) throw invalid("frame", fault.replace(/\bbody\b/, "frame"));
    let json: JsonValue;
    try {
      json = JSON.parse(text) as JsonValue;
    } catch {
      throw invalid("frame", `The frame is not JSON: send one ${typeName} as proto JSON.`);
    }
    if (json === null || typeof json !== "object" || Array.isArray(json))
      throw invalid("frame", `The frame must be a JSON object: one ${typeName} as proto JSON.`);
    return decode(method.input, json, registry);
  };

  return {
    // A request without a WebSocket upgrade (a plain GET, HEAD).
    handler: async (request, reply) =>
      sendProblem(reply.header("upgrade", "websocket"), notUpgraded(request), instanceOf(request)),

    async preHandler(request, reply) {
      if (!request.ws || request.method !== "GET") return;
      const refused = handshakeFault(request, reply);
      if (refused) {
        if (refused.status === 426) reply.header("upgrade", "websocket");
        return sendProblem(reply, refused, instanceOf(request));
      }
      const cancel = new AbortController();
      const frames = new Frames();
      open.add(cancel);
      // However the call ends, its request stream ends too.
      cancel.signal.addEventListener(
        "abort",
        () => {
          open.delete(cancel);
          frames.end();
        },
        { once: true },
      );
      // The client gone, before the upgrade or after it (or a handshake `ws` refuses), cancels the call.
      const connection = request.raw.socket;
      connection.once("close", () => cancel.abort());
      if (connection.destroyed) cancel.abort();
      let messages: AsyncIterator<Message> | undefined;
      try {
        if (givesEnvelope(request)) frames.push(envelope(request, {}));
        const admitted = admittedRequest(request);
        const header = admitted?.headers ?? forwardedHeaders(request);
        // No deadline on the call, which lasts as long as the socket; its answer (headers come with the first
        // message) must come within one.
        const first = await within(timeoutMs, async () => {
          const response = await transport.stream(method, cancel.signal, undefined, header, frames, admitted?.values);
          messages = response.message[Symbol.asyncIterator]();
          return messages.next();
        });
        opened.set(request, { cancel, frames, messages: messages!, first });
      } catch (error) {
        cancel.abort();
        // A cancelled call may not answer its pending read.
        void messages?.return?.().catch(() => undefined);
        return sendFailure(request, reply, error, logger);
      }
    },

    wsHandler(socket, request) {
      const call = opened.get(request);
      opened.delete(request);
      // The preHandler opens a call for every upgrade it lets through.
      if (!call) return socket.close(closeCodeOf(500), "internal");
      bridge(socket, call, {
        decode: decodeFrame,
        render,
        typeName,
        failed: (error) =>
          logger.error({ err: error, requestId: request.id, path: instanceOf(request) }, "websocket call failed"),
      });
    },
  };
}

function notUpgraded(request: FastifyRequest): Problem {
  return problemMessage(
    426,
    "request.upgrade_required",
    `${instanceOf(request)} is a WebSocket: GET it with Upgrade: websocket.`,
  );
}

/**
 * Why an upgrade cannot be taken, checked before the call opens: not a WebSocket upgrade (426), a handshake `ws`
 * would refuse (400), or a browser page on an origin the route's CORS does not answer (403; the CORS hook has set
 * Access-Control-Allow-Origin when it does; a page of the gateway's own origin is always let in).
 */
function handshakeFault(request: FastifyRequest, reply: FastifyReply): Problem | undefined {
  const { headers } = request;
  if (String(headers.upgrade ?? "").toLowerCase() !== "websocket") return notUpgraded(request);
  const version = headers["sec-websocket-version"];
  if (version !== "13" && version !== "8")
    return problemMessage(400, "request.invalid", "Sec-WebSocket-Version must be 13.", {
      field: "Sec-WebSocket-Version",
    });
  if (!/^[+/0-9A-Za-z]{22}==$/.test(String(headers["sec-websocket-key"] ?? "")))
    return problemMessage(400, "request.invalid", "Sec-WebSocket-Key must be 16 bytes in base64.", {
      field: "Sec-WebSocket-Key",
    });
  const origin = headers.origin;
  if (origin === undefined || reply.hasHeader("access-control-allow-origin") || sameOrigin(origin, headers.host))
    return undefined;
  return problemMessage(
    403,
    "request.origin_refused",
    `A page on ${origin} may not open this WebSocket: the route's CORS does not answer that origin.`,
  );
}

function sameOrigin(origin: string, host: string | undefined): boolean {
  try {
    return new URL(origin).host === host;
  } catch {
    return false;
  }
}

/** The RPC's first message, or 504 when it is not there within the call deadline. */
async function within<T>(timeoutMs: number, first: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(problem(504, "deadline_exceeded", `The call sent no first message within ${timeoutMs} ms.`)),
      timeoutMs,
    );
  });
  try {
    return await Promise.race([first(), late]);
  } finally {
    clearTimeout(timer);
  }
}

interface FrameCodec {
  decode(text: string): Message;
  render(message: Message): string;
  readonly typeName: string;
  /** Logs a call failing with a 5xx after the upgrade (its close reason says nothing of the cause). */
  failed(error: unknown): void;
}

/** Joins an upgraded socket to its call: client frames into the request stream, RPC messages out, one end for both. */
function bridge(socket: WebSocket, call: OpenedCall, codec: FrameCodec): void {
  const { cancel, frames, messages } = call;
  let ended = false;
  const finish = (code: number, reason = "") => {
    if (ended) return;
    ended = true;
    cancel.abort();
    void messages.return?.().catch(() => undefined);
    if (socket.readyState === socket.OPEN) socket.close(code, reasonText(reason));
  };
  // Aborted from outside (the gateway closing: openStreams) rather than by an end below, maybe while upgrading.
  const closing = () => finish(CLOSE.goingAway, "The gateway is closing.");
  if (cancel.signal.aborted) return closing();
  cancel.signal.addEventListener("abort", closing, { once: true });
  // The client's close (or a cut connection) ends the request stream and cancels the call.
  socket.on("close", () => finish(CLOSE.normal));
  frames.taken = () => {
    if (socket.isPaused && frames.length < READ_AHEAD) socket.resume();
  };
  socket.on("message", (data: RawData, isBinary: boolean) => {
    if (ended) return;
    if (isBinary)
      return finish(CLOSE.unsupportedData, `request.invalid: frames are text, one ${codec.typeName} as proto JSON`);
    let frame: Message;
    try {
      frame = codec.decode(textOf(data));
    } catch (error) {
      const found = problemOf(error);
      return finish(CLOSE.invalidPayload, `${found.code}: ${found.detail}`);
    }
    frames.push(frame);
    if (frames.length >= READ_AHEAD) socket.pause();
  });

  // The next message is read once the client has taken enough of the last ones.
  const send = (text: string): Promise<void> | undefined => {
    if (socket.bufferedAmount < WRITE_AHEAD) return void socket.send(text);
    return new Promise((resolve) => socket.send(text, () => resolve()));
  };
  void (async () => {
    try {
      for (let next = call.first, sent = 1; !next.done; next = await messages.next(), sent++) {
        // A closing socket takes nothing more; its close ends the call.
        if (ended || socket.readyState !== socket.OPEN) return;
        const text = codec.render(next.value);
        if (Buffer.byteLength(text) > WEBSOCKET_MAX_PAYLOAD)
          return finish(CLOSE.tooBig, `frame_too_large: a message over ${WEBSOCKET_MAX_PAYLOAD} bytes`);
        await send(text);
        // An in-process RPC and a fast client would otherwise keep the event loop to themselves.
        if (sent % TURN === 0) await new Promise(setImmediate);
      }
      finish(CLOSE.normal);
    } catch (error) {
      if (ended) return;
      const found = problemOf(error);
      if (found.status >= 500) codec.failed(error);
      finish(closeCodeOf(found.status), `${found.code}: ${found.detail}`);
    }
  })();
}

function textOf(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.from(data as ArrayBuffer).toString("utf8");
}

/** A close reason within its 123 bytes, cut on a character. */
function reasonText(reason: string): string {
  if (Buffer.byteLength(reason) <= REASON_BYTES) return reason;
  // "…" is 3 bytes.
  let cut = reason.slice(0, REASON_BYTES);
  while (Buffer.byteLength(cut) > REASON_BYTES - 3) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/** The request stream: client frames in arrival order, read by the RPC as it goes. */
class Frames implements AsyncIterable<Message> {
  private readonly queue: Message[] = [];
  private wake?: () => void;
  private ended = false;
  /** Called each time the RPC takes a frame. */
  taken: () => void = () => undefined;

  get length(): number {
    return this.queue.length;
  }

  push(frame: Message): void {
    this.queue.push(frame);
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Message> {
    for (;;) {
      const frame = this.queue.shift();
      if (frame !== undefined) {
        this.taken();
        yield frame;
      } else if (this.ended) {
        return;
      } else {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = undefined;
      }
    }
  }
}
