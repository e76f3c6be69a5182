import WebSocket from "ws";
import { until } from "./until.js";

/**
 * A WebSocket client for tests (`ws`), as a device or an operator opens one on the gateway: the messages it
 * received (each parsed as JSON, in order) and how it closed. `next()` takes the next message not yet taken.
 */
export class SocketPeer {
  readonly messages: unknown[] = [];
  closed?: { code: number; reason: string };
  private read = 0;

  constructor(
    readonly socket: WebSocket,
    /** The request id it opened with (`x-request-id`), which names its call on the server. */
    readonly id: string,
  ) {
    socket.on("message", (data: Buffer) => this.messages.push(JSON.parse(data.toString("utf8"))));
    socket.on("close", (code, reason) => (this.closed = { code, reason: reason.toString("utf8") }));
  }

  /** The next message; throws when the socket closes first. */
  async next(): Promise<unknown> {
    await until(() => this.messages.length > this.read || this.closed !== undefined);
    if (this.messages.length === this.read) throw new Error(`closed ${JSON.stringify(this.closed)} before a message`);
    return this.messages[this.read++];
  }

  /** How the socket closed, once it has. */
  async close(): Promise<{ code: number; reason: string }> {
    await until(() => this.closed !== undefined);
    return this.closed!;
  }

  /** Sends one message as JSON text. */
  send(json: unknown): void {
    this.socket.send(JSON.stringify(json));
  }
}

/** The HTTP answer that refused an upgrade. */
export interface RefusedUpgrade {
  id: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
}

let opens = 0;

/** Opens a WebSocket at an http(s) URL; answers the open socket, or the HTTP answer that refused the upgrade. */
export function openSocket(
  url: string,
  headers: Record<string, string> = {},
  options: WebSocket.ClientOptions = {},
): Promise<SocketPeer | RefusedUpgrade> {
  const id = `ws-${process.pid}-${++opens}`;
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url.replace(/^http/, "ws"), {
      headers: { "x-request-id": id, ...headers },
      ...options,
    });
    const peer = new SocketPeer(socket, id);
    socket.once("open", () => resolve(peer));
    socket.once("unexpected-response", (_request, response) => {
      let text = "";
      response.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
      response.on("end", () =>
        resolve({ id, status: response.statusCode!, headers: response.headers, body: JSON.parse(text) }),
      );
    });
    socket.once("error", reject);
  });
}

/** Opens a WebSocket that must upgrade. */
export async function openedSocket(
  url: string,
  headers?: Record<string, string>,
  options?: WebSocket.ClientOptions,
): Promise<SocketPeer> {
  const answer = await openSocket(url, headers, options);
  if (!(answer instanceof SocketPeer)) throw new Error(`refused: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer;
}

/** Asks for a WebSocket that must be refused: the HTTP answer. */
export async function refusedSocket(url: string, headers?: Record<string, string>): Promise<RefusedUpgrade> {
  const answer = await openSocket(url, headers);
  if (answer instanceof SocketPeer) {
    answer.socket.terminate();
    throw new Error("the upgrade was not refused");
  }
  return answer;
}
