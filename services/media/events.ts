import type { EntityManager } from "@mikro-orm/postgresql";
import { ObjectCreatedSchema } from "../../gen/pf/media/v1/events_pb.js";
import type { File } from "../../gen/pf/media/v1/media_pb.js";
import { recordEvent } from "../kit/events/outbox.js";

/** The subjects this service publishes. */
export const subjects = {
  /** Designed (the spec names no media event): a file object was stored. */
  objectCreated: "media.object.created",
} as const;

/** media.object.created, in the transaction recording the object. */
export function objectCreated(em: EntityManager, file: File) {
  return recordEvent(em, subjects.objectCreated, ObjectCreatedSchema, { file });
}
