import { toJson } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { GoalChangedSchema, InteractionChangedSchema } from "../../../gen/pf/tips/v1/events_pb.js";
import { OverlayAlertSchema, OverlayGoalSchema } from "../../../gen/pf/tips/v1/overlays_pb.js";
import { consumer } from "../../kit/events/consumer.js";
import type { TipsContext } from "../context.js";
import { hideAlert, saveGoalProgress, showAlert } from "../db/overlay-views.js";
import { loadProfile } from "../db/profiles.js";
import { alertOf, goalOf, isAlert } from "../domain/overlay-stream.js";
import { subjects } from "../events.js";

const JSON_OPTIONS = { useProtoFieldName: true } as const;

/**
 * The overlays' own views of the payments half's events (durable, once per
 * event): alerts with the id of the event that last showed them, for
 * Last-Event-ID resume, and goal progress, for a stream's first events.
 */
export const overlayConsumers = [
  // One consumer for the three, so a hide never overtakes the settlement it hides.
  consumer({
    name: "overlay_alerts",
    subject: "tips.interaction.*",
    event: InteractionChangedSchema,
    async handle({ interaction, occurredAt }, em, meta, ctx: TipsContext) {
      if (!interaction) return;
      if (meta.subject === subjects.interactionHidden) return hideAlert(em, interaction.id);
      const shows = meta.subject === subjects.interactionSettled || meta.subject === subjects.interactionRestored;
      if (!shows || !isAlert(interaction)) return;
      const tts = (await loadProfile(em, interaction.creator))?.textToSpeech;
      await showAlert(em, {
        interactionId: interaction.id,
        creator: interaction.creator,
        eventId: meta.id,
        alert: toJson(OverlayAlertSchema, alertOf(interaction, tts), JSON_OPTIONS),
        shownAt: occurredAt ? timestampDate(occurredAt) : ctx.clock.now(),
      });
    },
  }),
  consumer({
    name: "overlay_goals",
    subject: subjects.goalChanged,
    event: GoalChangedSchema,
    async handle({ goal, occurredAt }, em, _meta, ctx: TipsContext) {
      if (!goal) return;
      await saveGoalProgress(em, {
        goalId: goal.id,
        creator: goal.creator,
        goal: toJson(OverlayGoalSchema, goalOf(goal), JSON_OPTIONS),
        updatedAt: occurredAt ? timestampDate(occurredAt) : ctx.clock.now(),
      });
    },
  }),
];
