import type { EntityManager } from "@mikro-orm/postgresql";
import type { ModerationRecord } from "../../gen/pf/community/v1/common_pb.js";
import { ModerationRecordedSchema } from "../../gen/pf/community/v1/events_pb.js";
import { recordEvent } from "../kit/events/outbox.js";

/** The subjects this service publishes. */
export const subjects = {
  /** A moderation action was recorded; forum actions are applied in space from it (consumers/forum-moderation.ts). */
  moderationRecorded: "community.moderation.recorded",
} as const;

/** Records the event of a moderation record, in the transaction that wrote it. */
export function moderationRecorded(em: EntityManager, record: ModerationRecord) {
  return recordEvent(em, subjects.moderationRecorded, ModerationRecordedSchema, { record });
}
