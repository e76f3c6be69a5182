import { create, fromJsonString, toJsonString, type MessageInitShape } from "@bufbuild/protobuf";
import type { Logger } from "pino";
import WebSocket from "ws";
import { LinkFrameSchema, type LinkFrame } from "../gen/pf/bot/v1/link_pb.js";

/** The link's frame limit (the gateway's too): a bigger message closes the socket. */
export const MAX_FRAME_BYTES = 1024 * 1024;

/** The header the link presents the device credential in (never a query string: URLs get logged). */
export const CREDENTIAL_HEADER = "X-PF-Device-Credential";

export interface LinkOptions {
  /** The gateway's base URL (http or https). */
  url: string;
  credential: string;
  logger: Logger;
  /** The hello frame, built afresh at each connect (jobs still running, caps). */
  hello(): LinkFrame;
  /** Every frame bot sends, welcome first. */
  onFrame(frame: LinkFrame): void;
  /** The credential is done for (a `close` frame, or refused at the upgrade): the link has stopped. */
  onClosed(why: string): void;
  /** Reconnect delays: exponential from baseMs to maxMs, jittered. */
  backoff?: { baseMs: number; maxMs: number };
  /** A link that hears nothing (not even a ping) this long is dropped and reconnected. */
  silenceMs?: number;
}

/**
 * The device link: one outbound WebSocket to bot (`GET /bot/api/v1/devices/link`), the credential in a header,
 * frames as proto JSON of `LinkFrame`. It waits for `welcome`, answers with `hello`, then delivers what was queued
 * while it was down. It reconnects with jittered exponential backoff, and stops for good on a `close` frame, when
 * the upgrade refuses the credential (401, 403), or when the link fails with one of those (close code 4401, 4403).
 */
export class Link {
  private socket?: WebSocket;
  private ready = false;
  private stopped = false;
  private attempt = 0;
  private retry?: NodeJS.Timeout;
  private silence?: NodeJS.Timeout;
  /** Frames waiting for a welcomed link. */
  private outbox: LinkFrame[] = [];
  /** Frames handed to the socket and not yet written: queued again if it closes first. */
  private unwritten = new Set<LinkFrame>();
  private readonly backoff: { baseMs: number; maxMs: number };

  constructor(private readonly options: LinkOptions) {
    this.backoff = options.backoff ?? { baseMs: 500, maxMs: 30_000 };
  }

  start(): void {
    this.connect();
  }

  /** Whether a welcomed link is open now. */
  connected(): boolean {
    return this.ready;
  }

  /** Sends a frame now, or once the link is back. */
  send(frame: LinkFrame): void {
    if (this.ready && this.socket?.readyState === WebSocket.OPEN) this.write(this.socket, frame);
    else this.outbox.push(frame);
  }

  /** Jobs with a frame still to send (an exit among them): bot must not take them for gone. */
  queuedJobIds(): string[] {
    const ids = [...this.unwritten, ...this.outbox].map((frame) => jobIdOf(frame)).filter((id) => id !== undefined);
    return [...new Set(ids)];
  }

  /** Closes the link and stops reconnecting. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    clearTimeout(this.silence);
    const socket = this.socket;
    if (!socket || socket.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      socket.once("close", () => resolve());
      if (socket.readyState === WebSocket.CONNECTING) socket.terminate();
      else socket.close(1000);
    });
  }

  private connect() {
    const url = new URL(
      "bot/api/v1/devices/link",
      this.options.url.endsWith("/") ? this.options.url : `${this.options.url}/`,
    );
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(url, {
      headers: { [CREDENTIAL_HEADER]: this.options.credential },
      maxPayload: MAX_FRAME_BYTES,
      handshakeTimeout: 10_000,
    });
    this.socket = socket;
    const log = this.options.logger;
    socket.on("unexpected-response", (request, response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (text: string) => (body += text.slice(0, 4096 - body.length)));
      response.on("end", () => {
        const status = response.statusCode ?? 0;
        const code = problemCode(body);
        if (status === 401 || status === 403) this.finish(`refused at the upgrade: ${status} ${code}`);
        else log.warn({ status, code }, "the link was not upgraded; retrying");
        socket.terminate();
      });
    });
    socket.on("open", () => this.hearing(socket));
    socket.on("ping", () => this.hearing(socket));
    socket.on("message", (data, isBinary) => {
      this.hearing(socket);
      let frame: LinkFrame;
      try {
        frame = fromJsonString(LinkFrameSchema, (data as Buffer).toString("utf8"), { ignoreUnknownFields: true });
      } catch (error) {
        log.warn({ binary: isBinary, error: (error as Error).message }, "an unreadable frame: dropping the link");
        return socket.close(1007, "not a LinkFrame");
      }
      if (!this.ready) {
        if (frame.frame.case !== "welcome") {
          log.warn({ frame: frame.frame.case }, "the link's first frame is not welcome: dropping it");
          return socket.close(1002, "welcome expected");
        }
        this.welcomed(socket);
      }
      this.options.onFrame(frame);
      if (frame.frame.case === "close") this.finish(`closed: ${frame.frame.value.reason}`);
    });
    socket.on("error", (error) => log.warn({ error: error.message }, "link error"));
    socket.on("close", (code, reason) => {
      clearTimeout(this.silence);
      this.ready = false;
      // What never reached the socket goes first next time (a hello is rebuilt, not resent).
      this.outbox = [...[...this.unwritten].filter((frame) => frame.frame.case !== "hello"), ...this.outbox];
      this.unwritten.clear();
      // The gateway closes a failed link with 4000 + the problem's status: 401 and 403 are the credential's end.
      if (code === 4401 || code === 4403) this.finish(`refused on the link: ${code} ${reason.toString()}`);
      if (this.stopped) return;
      const delay = this.nextDelay();
      log.info({ code, reason: reason.toString(), retryInMs: delay }, "link closed");
      this.retry = setTimeout(() => this.connect(), delay);
    });
  }

  private welcomed(socket: WebSocket) {
    this.ready = true;
    this.attempt = 0;
    this.write(socket, this.options.hello());
    for (const frame of this.outbox.splice(0)) this.write(socket, frame);
  }

  private write(socket: WebSocket, frame: LinkFrame) {
    this.unwritten.add(frame);
    socket.send(toJsonString(LinkFrameSchema, frame, { useProtoFieldName: true }), (error) => {
      if (!error) this.unwritten.delete(frame);
    });
  }

  /** Something came from bot: the link is alive for another silenceMs. */
  private hearing(socket: WebSocket) {
    clearTimeout(this.silence);
    this.silence = setTimeout(() => {
      this.options.logger.warn({ silentMs: this.options.silenceMs }, "the link went silent: reconnecting");
      socket.terminate();
    }, this.options.silenceMs ?? 75_000);
  }

  /** Half the exponential delay, plus a random part of the other half: never a herd, never a tight loop. */
  private nextDelay(): number {
    const ceiling = Math.min(this.backoff.maxMs, this.backoff.baseMs * 2 ** this.attempt++);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  private finish(why: string) {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.retry);
    this.socket?.close(1000);
    this.options.onClosed(why);
  }
}

/** The job a device frame is about. */
function jobIdOf(frame: LinkFrame): string | undefined {
  const { value } = frame.frame;
  return value && "jobId" in value ? value.jobId : undefined;
}

/** A problem+json body's code, for the log (the body never holds the credential). */
function problemCode(body: string): string {
  try {
    const { code } = JSON.parse(body) as { code?: unknown };
    return typeof code === "string" ? code : "";
  } catch {
    return "";
  }
}

/** A link frame from its case and value. */
export const frameOf = (frame: MessageInitShape<typeof LinkFrameSchema>["frame"]) => create(LinkFrameSchema, { frame });
