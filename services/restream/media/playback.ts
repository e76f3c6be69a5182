import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { Publish } from "./ingest.js";

export interface PlaybackOptions {
  bind: string;
  /** 0 picks a free port. */
  port: number;
  /** The live publish of a session this worker holds, if any. */
  sessionPublish(sessionId: string): Publish | undefined;
}

export interface PlaybackServer {
  readonly port: number;
  close(): Promise<void>;
}

/** A session's HTTP-FLV path: by session id, never by ingest key (it must not reach viewers). */
export function playbackPath(sessionId: string): string {
  return `/live/${sessionId}.flv`;
}

/**
 * HTTP-FLV playback of the sessions this worker holds, `GET /live/<session id>.flv`: each viewer reads the
 * session's broadcast (node-media-server's FLV muxing, from the current GOP) until it leaves or the session ends.
 */
export async function listenPlayback(options: PlaybackOptions): Promise<PlaybackServer> {
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => serve(request, response, options));
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.bind, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** What a viewer may have waiting to be sent (a few seconds of a high bitrate). */
const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

function serve(request: IncomingMessage, response: ServerResponse, options: PlaybackOptions): void {
  const sessionId = /^\/live\/([\w-]+)\.flv(?:\?.*)?$/.exec(request.url ?? "")?.[1];
  const publish = sessionId === undefined ? undefined : options.sessionPublish(sessionId);
  if (request.method !== "GET" || !publish) {
    response.writeHead(request.method === "GET" ? 404 : 405, { "content-type": "text/plain" }).end();
    return;
  }
  response.writeHead(200, {
    "content-type": "video/x-flv",
    "cache-control": "no-store",
    // Players on any site may read public playback (flv.js fetches it).
    "access-control-allow-origin": "*",
  });
  const detach = publish.read((chunk) => {
    if (response.writableEnded) return;
    // A viewer too slow for the stream is dropped rather than buffered without bound.
    if (response.writableLength > MAX_BUFFERED_BYTES) response.destroy();
    else response.write(chunk);
  });
  const end = () => {
    detach();
    response.end();
  };
  response.once("close", end);
  void publish.left.then(end);
}
