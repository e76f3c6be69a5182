import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { GoalChangedSchema, InteractionChangedSchema } from "../../gen/pf/tips/v1/events_pb.js";
import type { Goal, Interaction } from "../../gen/pf/tips/v1/tips_pb.js";
import { recordEvent } from "../kit/events/outbox.js";

/** The subjects this service publishes (overlays consume them). */
export const subjects = {
  interactionSettled: "tips.interaction.settled",
  interactionHidden: "tips.interaction.hidden",
  interactionRestored: "tips.interaction.restored",
  goalChanged: "tips.goal.changed",
} as const;

export type InteractionSubject = (typeof subjects)["interactionSettled" | "interactionHidden" | "interactionRestored"];

export function interactionChanged(em: EntityManager, subject: InteractionSubject, interaction: Interaction, at: Date) {
  return recordEvent(em, subject, InteractionChangedSchema, create(InteractionChangedSchema, { interaction, occurredAt: timestampFromDate(at) }));
}

export function goalChanged(em: EntityManager, goal: Goal, at: Date) {
  return recordEvent(em, subjects.goalChanged, GoalChangedSchema, create(GoalChangedSchema, { goal, occurredAt: timestampFromDate(at) }));
}
