import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { LiveStreamEventSchema } from "../../gen/pf/live/v1/events_pb.js";
import { recordEvent } from "../kit/events/outbox.js";
import type { Applied } from "./db/streams.js";

/** The subjects this service publishes (designed). */
export const subjects = {
  streamStarted: "live.stream.started",
  streamEnded: "live.stream.ended",
} as const;

/** live.stream.started or live.stream.ended for a stream as a session event left it, in that event's transaction. */
export function streamChanged(em: EntityManager, stream: Applied, username: string, at: Date) {
  return recordEvent(
    em,
    stream.after === "live" ? subjects.streamStarted : subjects.streamEnded,
    LiveStreamEventSchema,
    {
      streamId: stream.id,
      owner: stream.owner,
      username,
      title: stream.title,
      state: stream.after,
      startedAt: stream.startedAt ? timestampFromDate(stream.startedAt) : undefined,
      endedAt: stream.endedAt ? timestampFromDate(stream.endedAt) : undefined,
    },
    at,
  );
}
