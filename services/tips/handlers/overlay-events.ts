import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { OverlayConfigChangedSchema, OverlayTokenRevokedSchema } from "../../../gen/pf/tips/v1/overlay_events_pb.js";
import type { OverlayConfig } from "../../../gen/pf/tips/v1/overlays_pb.js";
import { recordEvent } from "../../kit/events/outbox.js";
import { subjects } from "../events.js";

/** The subjects the overlay half publishes, and the ones of the payments half its streams follow. */
export const overlaySubjects = {
  configChanged: "tips.overlay_config.changed",
  tokenRevoked: "tips.overlay_token.revoked",
  ...subjects,
} as const;

export function configChanged(em: EntityManager, config: OverlayConfig, at: Date) {
  return recordEvent(em, overlaySubjects.configChanged, OverlayConfigChangedSchema, create(OverlayConfigChangedSchema, { config, occurredAt: timestampFromDate(at) }));
}

export function tokenRevoked(em: EntityManager, token: { id: string; creator: string }, at: Date) {
  return recordEvent(
    em,
    overlaySubjects.tokenRevoked,
    OverlayTokenRevokedSchema,
    create(OverlayTokenRevokedSchema, { tokenId: token.id, creator: token.creator, occurredAt: timestampFromDate(at) }),
  );
}
