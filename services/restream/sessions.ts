import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { RestreamSessionEventSchema } from "../../gen/pf/restream/v1/events_pb.js";
import { issueCommand } from "./commands.js";
import type { RestreamContext } from "./context.js";
import type { SessionRow, StreamRow } from "./db/entities.js";
import { saveSession } from "./db/sessions.js";
import { streamById } from "./db/streams.js";
import { playbackNow, recordingWhenLive, recordingWhenOver, type Playback } from "./domain/sessions.js";
import { recordSessionEvent } from "./events.js";
import { endOutputsOf } from "./outputs.js";

/** How a session stops: `ended` (with why: ended, encoder_left, key_rotated…) or `interrupted` (worker_lost). */
export interface SessionClose {
  state: "ended" | "interrupted";
  reason: string;
  at: Date;
  /** Queue end_session for the generation holding it, whose worker then disconnects the encoder. */
  tellWorker: boolean;
}

/**
 * Ends or interrupts an open session in the caller's transaction (it holds the session's row lock): its state, end
 * and recording, its running outputs stopped, its event; with `tellWorker`, the end_session command.
 */
export async function closeSession(
  ctx: RestreamContext,
  em: EntityManager,
  session: SessionRow,
  close: SessionClose,
): Promise<void> {
  await saveSession(em, session, {
    state: close.state,
    endedAt: close.at,
    endReason: close.reason,
    recording: recordingWhenOver(session.recording),
  });
  await endOutputsOf(ctx, em, session, close.at);
  if (close.tellWorker)
    await issueCommand(ctx, em, {
      workerId: session.workerId,
      generation: session.generation,
      kind: "end_session",
      sessionId: session.id,
      reason: close.reason,
    });
  const stream = (await streamById(em, session.streamId))!;
  await recordSessionEvent(
    em,
    close.state === "ended" ? "sessionEnded" : "sessionInterrupted",
    sessionEvent(stream, session, close.at),
  );
}

/** A starting session goes live: media flows, as its worker reports it. */
export async function sessionLive(
  em: EntityManager,
  session: SessionRow,
  stream: StreamRow,
  report: { media: Record<string, unknown> | null; playback: Playback | null; at: Date },
): Promise<void> {
  await saveSession(em, session, {
    state: "live",
    liveAt: report.at,
    media: report.media,
    playback: report.playback as Record<string, unknown> | null,
    recording: recordingWhenLive(stream.settings.recording),
  });
  await recordSessionEvent(em, "sessionStarted", sessionEvent(stream, session, report.at));
}

/** A session's event: what the live read side needs, never a key or a destination. */
function sessionEvent(
  stream: StreamRow,
  session: SessionRow,
  at: Date,
): MessageInitShape<typeof RestreamSessionEventSchema> {
  return {
    sessionId: session.id,
    streamId: stream.id,
    owner: stream.owner,
    title: stream.title,
    state: session.state,
    externalRefs: stream.externalRefs,
    playback: playbackNow(session.state, session.playback as Playback | null),
    media: session.media ?? undefined,
    startedAt: timestampFromDate(session.startedAt),
    endedAt: session.endedAt ? timestampFromDate(session.endedAt) : undefined,
    endReason: session.endReason,
    at: timestampFromDate(at),
  };
}
