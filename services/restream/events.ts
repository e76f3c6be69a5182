import type { MessageInitShape } from "@bufbuild/protobuf";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  RestreamOutputEventSchema,
  RestreamSessionEventSchema,
  RestreamStreamEventSchema,
} from "../../gen/pf/restream/v1/events_pb.js";
import { recordEvent } from "../kit/events/outbox.js";

/** The subjects restream publishes (designed: the spec names none). No event carries a key, a URL or a log line. */
export const restreamSubjects = {
  sessionStarted: "restream.session.started",
  sessionEnded: "restream.session.ended",
  sessionInterrupted: "restream.session.interrupted",
  outputStateChanged: "restream.output.state_changed",
  keyRotated: "restream.key.rotated",
  streamArchived: "restream.stream.archived",
} as const;

/** A session went live, ended or was interrupted: recorded in the transaction that changed it. */
export async function recordSessionEvent(
  em: EntityManager,
  subject: "sessionStarted" | "sessionEnded" | "sessionInterrupted",
  event: MessageInitShape<typeof RestreamSessionEventSchema>,
): Promise<void> {
  await recordEvent(em, restreamSubjects[subject], RestreamSessionEventSchema, event);
}

/** An output changed state, in the transaction that changed it. */
export async function recordOutputEvent(
  em: EntityManager,
  event: MessageInitShape<typeof RestreamOutputEventSchema>,
): Promise<void> {
  await recordEvent(em, restreamSubjects.outputStateChanged, RestreamOutputEventSchema, event);
}

/** A key rotated or a stream archived, in the transaction that did it. */
export async function recordStreamEvent(
  em: EntityManager,
  subject: "keyRotated" | "streamArchived",
  event: MessageInitShape<typeof RestreamStreamEventSchema>,
): Promise<void> {
  await recordEvent(em, restreamSubjects[subject], RestreamStreamEventSchema, event);
}
