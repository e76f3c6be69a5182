import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import { OverlayAlertRow, OverlayGoalRow } from "./overlay-entities.js";

/** The overlays' last heard progress of these goals of a creator (another creator's goal ids find nothing). */
export function goalViews(em: EntityManager, creator: string, goalIds: string[]): Promise<OverlayGoalRow[]> {
  return em.find(OverlayGoalRow, { creator, goalId: { $in: goalIds } });
}

/** Up to `limit` alerts of a creator still shown, after an event id and since a time, the oldest first. */
export function alertsShownAfter(
  em: EntityManager,
  creator: string,
  afterEventId: string,
  since: Date,
  limit: number,
): Promise<OverlayAlertRow[]> {
  return em.find(
    OverlayAlertRow,
    { creator, hidden: false, eventId: { $gt: afterEventId }, shownAt: { $gte: since } },
    { orderBy: { eventId: "asc" }, limit },
  );
}

/** Keeps a hidden interaction's alert from resumed streams, in the caller's transaction. */
export async function hideAlert(em: EntityManager, interactionId: string): Promise<void> {
  await sql(em, `update {overlay_alerts} set hidden = true where interaction_id = ?`, [interactionId]);
}

/** Records an alert as shown by one event (settled or restored): resumed streams replay it after that event's id. */
export async function showAlert(
  em: EntityManager,
  alert: { interactionId: string; creator: string; eventId: string; alert: unknown; shownAt: Date },
): Promise<void> {
  await sql(
    em,
    `insert into {overlay_alerts} (interaction_id, creator, event_id, alert, hidden, shown_at)
     values (?, ?, ?, ?, false, ?)
     on conflict (interaction_id) do update
       set event_id = excluded.event_id, alert = excluded.alert, hidden = false, shown_at = excluded.shown_at`,
    [alert.interactionId, alert.creator, alert.eventId, JSON.stringify(alert.alert), alert.shownAt],
  );
}

/** Records a goal's progress as last published, for the first events of a stream. */
export async function saveGoalProgress(
  em: EntityManager,
  progress: { goalId: string; creator: string; goal: unknown; updatedAt: Date },
): Promise<void> {
  await sql(
    em,
    `insert into {overlay_goals} (goal_id, creator, goal, updated_at) values (?, ?, ?, ?)
     on conflict (goal_id) do update set goal = excluded.goal, updated_at = excluded.updated_at`,
    [progress.goalId, progress.creator, JSON.stringify(progress.goal), progress.updatedAt],
  );
}
