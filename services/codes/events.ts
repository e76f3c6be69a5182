import type { EntityManager } from "@mikro-orm/postgresql";
import {
  ReleaseDeprecatedSchema,
  ReleasePublishedSchema,
  ReleaseRevokedSchema,
} from "../../gen/pf/codes/v1/events_pb.js";
import type { Release } from "../../gen/pf/codes/v1/releases_pb.js";
import { recordEvent } from "../kit/events/outbox.js";

/**
 * The subjects this service publishes (designed: the spec names none). A
 * draft is never shown to anyone, so nothing is published for it.
 */
export const subjects = {
  /** A draft was published. */
  releasePublished: "codes.release.published",
  /** A published release was deprecated. */
  releaseDeprecated: "codes.release.deprecated",
  /** A release once published was revoked. */
  releaseRevoked: "codes.release.revoked",
} as const;

/** codes.release.published, in the publishing transaction. */
export function releasePublished(em: EntityManager, release: Release) {
  return recordEvent(em, subjects.releasePublished, ReleasePublishedSchema, { release });
}

/** codes.release.deprecated, in the deprecating transaction. */
export function releaseDeprecated(em: EntityManager, release: Release) {
  return recordEvent(em, subjects.releaseDeprecated, ReleaseDeprecatedSchema, { release });
}

/** codes.release.revoked, in the revoking transaction (only for a release once published). */
export function releaseRevoked(em: EntityManager, release: Release) {
  return recordEvent(em, subjects.releaseRevoked, ReleaseRevokedSchema, { release });
}
