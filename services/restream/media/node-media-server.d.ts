// The parts of node-media-server 4.4.3 (no types of its own) the embedded ingest uses: its RTMP session, the stream
// broadcast a session publishes to, and its process-wide logger. Read from its source (src/session/rtmp_session.js,
// src/server/broadcast_server.js, src/core/logger.js).

declare module "node-media-server/src/session/rtmp_session.js" {
  import type { Socket } from "node:net";

  namespace RtmpSession {
    /** One FLV tag as parsed: `flags` 0 audio header, 1 audio, 2 video header, 3 keyframe, 4 video, 5 metadata. */
    interface Packet {
      codec_id: number;
      codec_type: number;
      flags: number;
    }
    /** A reader of a broadcast: an empty `ip` marks an internal one (no play events, not counted). */
    interface Subscriber {
      id: string;
      ip: string;
      protocol: "flv" | "rtmp";
      endTime: number;
      sendBuffer(buffer: Buffer): void;
    }
    /** A stream path's publisher and readers (one per path in the process). */
    interface Broadcast {
      /** How long a left publisher's path stays held for the same client to resume (30 s unless changed). */
      publishGraceMs: number;
      /** Sends the FLV header, cached metadata, codec headers and GOP, then every packet: null, or an error. */
      postPlay(subscriber: Subscriber): string | null;
      donePlay(subscriber: Subscriber): void;
    }
    /** The RTMP protocol handler's hooks, set by `run()`. */
    interface Protocol {
      /** The stream name the client asked for (set even when the session refused it). */
      streamName?: string;
      onPlayCallback: () => void;
      onPushCallback: () => void;
      onPacketCallback: (packet: Packet) => void;
    }
  }

  class RtmpSession {
    constructor(socket: Socket);
    readonly id: string;
    readonly socket: Socket;
    readonly rtmp: RtmpSession.Protocol;
    readonly streamApp: string;
    readonly streamName: string;
    readonly streamPath: string;
    readonly isPublisher: boolean;
    readonly broadcast: RtmpSession.Broadcast;
    /** From the publisher's onMetaData (0 or undefined when it sent none). */
    readonly videoWidth: number | undefined;
    readonly videoHeight: number | undefined;
    readonly videoFramerate: number | undefined;
    /** Wires the socket to the protocol handler. */
    run(): void;
    /** Registers the session as its path's publisher (refused, and the socket ended, when the path has one). */
    onPush(): void;
    /** Hands a packet to the broadcast. */
    onPacket(packet: RtmpSession.Packet): void;
  }
  export = RtmpSession;
}

declare module "node-media-server/src/core/logger.js" {
  /** The one logger every node-media-server module writes to (to the console unless `log` is replaced). */
  const logger: { level: string; log(message: string, level?: string): void };
  export = logger;
}
