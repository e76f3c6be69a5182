import { toJson } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { GoalChangedSchema, InteractionChangedSchema } from "../../../gen/pf/tips/v1/events_pb.js";
import { OverlayAlertSchema, OverlayGoalSchema } from "../../../gen/pf/tips/v1/overlays_pb.js";
import { consumer } from "../../kit/events/consumer.js";
import { qualified } from "../../kit/db/orm.js";
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
    async handle({ interaction, occurredAt }, em, meta) {
      if (!interaction) return;
      const table = qualified(em, "overlay_alerts");
      if (meta.subject === subjects.interactionHidden) {
        await em.getConnection().execute(`update ${table} set hidden = true where interaction_id = ?`, [interaction.id], "run", em.getTransactionContext());
        return;
      }
      const shows = meta.subject === subjects.interactionSettled || meta.subject === subjects.interactionRestored;
      if (!shows || !isAlert(interaction)) return;
      const tts = (await loadProfile(em, interaction.creator))?.textToSpeech;
      const alert = toJson(OverlayAlertSchema, alertOf(interaction, tts), JSON_OPTIONS);
      await em.getConnection().execute(
        `insert into ${table} (interaction_id, creator, event_id, alert, hidden, shown_at) values (?, ?, ?, ?, false, ?)
         on conflict (interaction_id) do update set event_id = excluded.event_id, alert = excluded.alert, hidden = false, shown_at = excluded.shown_at`,
        [interaction.id, interaction.creator, meta.id, JSON.stringify(alert), occurredAt ? timestampDate(occurredAt) : new Date()],
        "run",
        em.getTransactionContext(),
      );
    },
  }),
  consumer({
    name: "overlay_goals",
    subject: subjects.goalChanged,
    event: GoalChangedSchema,
    async handle({ goal, occurredAt }, em) {
      if (!goal) return;
      const progress = toJson(OverlayGoalSchema, goalOf(goal), JSON_OPTIONS);
      await em.getConnection().execute(
        `insert into ${qualified(em, "overlay_goals")} (goal_id, creator, goal, updated_at) values (?, ?, ?, ?)
         on conflict (goal_id) do update set goal = excluded.goal, updated_at = excluded.updated_at`,
        [goal.id, goal.creator, JSON.stringify(progress), occurredAt ? timestampDate(occurredAt) : new Date()],
        "run",
        em.getTransactionContext(),
      );
    },
  }),
];
