import { randomUUID } from "node:crypto";
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import nmsLogger from "node-media-server/src/core/logger.js";
import RtmpSession from "node-media-server/src/session/rtmp_session.js";
import type { MediaInfo } from "./control-plane.js";
import { mediaInfoOf, type PublishedMedia } from "./media-info.js";
import { redactLine } from "../domain/redact.js";

/** The application of the publish URL: `rtmp://host:port/live/<ingest key>`. */
export const INGEST_APP = "live";

/** How long an ingest connection may send nothing. */
const IDLE_MS = 30_000;

/** An encoder publishing to the ingest, before and after the worker authorised it. */
export interface Publish {
  /** The ingest key from the RTMP path. */
  readonly key: string;
  readonly remoteAddress: string;
  /** Resolves at the first audio or video frame. */
  readonly flowing: Promise<void>;
  /** Resolves once the encoder's connection closed (it left, or was disconnected). */
  readonly left: Promise<void>;
  /** What it sends, as known so far. */
  media(): MediaInfo;
  /**
   * Reads the stream as FLV: header, metadata, codec headers and the current GOP, then every packet as it comes.
   * Returns the detach.
   */
  read(write: (chunk: Buffer) => void): () => void;
  /** Closes the encoder's connection now. */
  disconnect(): void;
}

export interface IngestOptions {
  bind: string;
  /** 0 picks a free port. */
  port: number;
  /** A publish began: the worker authorises it (or disconnects it). */
  onPublish(publish: Publish): void;
  /** A line node-media-server wrote about one of this ingest's connections, keys masked; `publish` when it has one. */
  onLog(line: string, publish: Publish | undefined): void;
}

export interface Ingest {
  readonly port: number;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

/**
 * The RTMP ingest on node-media-server 4.4.3's own RTMP session, on a listener of ours: its NodeMediaServer class
 * cannot bind port 0 (a falsy port skips the listener), exits the process when a port is taken, opens a JSON store
 * in the working directory and writes to the console, and its state (config, sessions, broadcasts, events) is one
 * per process. So each connection gets an RtmpSession whose publish and play hooks are ours: a play is refused, a
 * publish is registered on its path (so a second publisher on it is refused) and handed to `onPublish`, which
 * authorises it. Its 30 s publish grace is turned off: a key is authorised per connection, and a left encoder's path
 * is free again at once. Its logger, one per process, is routed to the ingest that owns each line's session.
 */
export async function listenIngest(options: IngestOptions): Promise<Ingest> {
  const sockets = new Set<Socket>();
  const owned = new Map<string, { session: RtmpSession; publish?: Publish }>();
  const log = (line: string) => {
    const id = /session (\w+)/.exec(line)?.[1];
    const entry = id === undefined ? undefined : owned.get(id);
    if (!entry) return;
    const key = entry.session.rtmp.streamName ?? entry.session.streamName;
    options.onLog(redactLine(line, key ? [key] : []), entry.publish);
  };
  const server = createServer((socket) => {
    sockets.add(socket);
    // A connection silent this long (one that never publishes, a stalled encoder) is closed.
    socket.setTimeout(IDLE_MS, () => socket.destroy());
    const session = new RtmpSession(socket);
    session.run();
    owned.set(session.id, { session });
    socket.once("close", () => {
      sockets.delete(socket);
      owned.delete(session.id);
    });
    session.rtmp.onPlayCallback = () => {
      log(`RTMP session ${session.id} play refused: the ingest only takes publishes`);
      socket.destroy();
    };
    session.rtmp.onPushCallback = () => {
      const publish = publishOf(session);
      if (!publish) return;
      owned.set(session.id, { session, publish });
      options.onPublish(publish);
    };
  });
  await listen(server, options.port, options.bind);
  routeLogs(log);
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      loggers.delete(log);
      const closed = new Promise((resolve) => server.close(resolve));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** The session as a publish, or undefined when it cannot be one (and its connection is closed). */
function publishOf(session: RtmpSession): Publish | undefined {
  // An unsafe name was refused by node-media-server already (no stream path); another application is refused here.
  if (session.streamApp !== INGEST_APP || !session.streamPath) {
    session.socket.destroy();
    return undefined;
  }
  session.broadcast.publishGraceMs = 0;
  session.onPush();
  if (!session.isPublisher) {
    session.socket.destroy();
    return undefined;
  }
  const media: PublishedMedia = {};
  let flowed!: () => void;
  const flowing = new Promise<void>((resolve) => (flowed = resolve));
  const left = new Promise<void>((resolve) => session.socket.once("close", () => resolve()));
  session.rtmp.onPacketCallback = (packet) => {
    session.onPacket(packet);
    if (packet.flags <= 1) media.audioCodecId ??= packet.codec_id;
    else if (packet.flags <= 4) media.videoCodecId ??= packet.codec_id;
    if (packet.flags === 1 || packet.flags === 3 || packet.flags === 4) flowed();
  };
  return {
    key: session.streamName,
    remoteAddress: session.socket.remoteAddress ?? "",
    flowing,
    left,
    media: () =>
      mediaInfoOf({
        ...media,
        width: session.videoWidth,
        height: session.videoHeight,
        fps: session.videoFramerate,
      }),
    read: (write) => {
      // An internal reader (empty ip): node-media-server emits no play events for it and does not count it.
      const reader = { id: randomUUID(), ip: "", protocol: "flv" as const, endTime: 0, sendBuffer: write };
      session.broadcast.postPlay(reader);
      return () => session.broadcast.donePlay(reader);
    },
    disconnect: () => session.socket.destroy(),
  };
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/** node-media-server's logger is one per process: each running ingest takes the lines about its own sessions. */
const loggers = new Set<(line: string) => void>();

function routeLogs(log: (line: string) => void): void {
  loggers.add(log);
  nmsLogger.log = (message) => {
    for (const take of loggers) take(message);
  };
}
