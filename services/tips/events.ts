import type { EntityManager } from "@mikro-orm/postgresql";
import { GoalChangedSchema, InteractionChangedSchema } from "../../gen/pf/tips/v1/events_pb.js";
import { OverlayConfigChangedSchema, OverlayTokenRevokedSchema } from "../../gen/pf/tips/v1/overlay_events_pb.js";
import type { OverlayConfig } from "../../gen/pf/tips/v1/overlays_pb.js";
import type { Goal } from "../../gen/pf/tips/v1/goals_pb.js";
import type { Interaction } from "../../gen/pf/tips/v1/interactions_pb.js";
import { recordEvent } from "../kit/events/outbox.js";

/** The subjects this service publishes (its overlay streams follow them all). */
export const subjects = {
  interactionSettled: "tips.interaction.settled",
  interactionHidden: "tips.interaction.hidden",
  interactionRestored: "tips.interaction.restored",
  goalChanged: "tips.goal.changed",
  configChanged: "tips.overlay_config.changed",
  tokenRevoked: "tips.overlay_token.revoked",
} as const;

export type InteractionSubject = (typeof subjects)["interactionSettled" | "interactionHidden" | "interactionRestored"];

export function interactionChanged(em: EntityManager, subject: InteractionSubject, interaction: Interaction, at: Date) {
  return recordEvent(em, subject, InteractionChangedSchema, { interaction }, at);
}

export function goalChanged(em: EntityManager, goal: Goal, at: Date) {
  return recordEvent(em, subjects.goalChanged, GoalChangedSchema, { goal }, at);
}

export function configChanged(em: EntityManager, config: OverlayConfig, at: Date) {
  return recordEvent(em, subjects.configChanged, OverlayConfigChangedSchema, { config }, at);
}

export function tokenRevoked(em: EntityManager, token: { id: string; creator: string }, at: Date) {
  return recordEvent(
    em,
    subjects.tokenRevoked,
    OverlayTokenRevokedSchema,
    { tokenId: token.id, creator: token.creator },
    at,
  );
}
