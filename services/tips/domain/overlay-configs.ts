import { create } from "@bufbuild/protobuf";
import {
  AlertSettingsSchema,
  GoalSettingsSchema,
  GoalStyle,
  OverlayKind,
  type AlertSettings,
  type GoalSettings,
  type OverlayConfigRequest,
} from "../../../gen/pf/tips/v1/overlays_pb.js";
import { maxLength } from "../../kit/handler/text.js";
import { invalid } from "../../kit/handler/problem.js";
import { optionalUrl } from "../../kit/handler/urls.js";

export type OverlayKindName = "alerts" | "goals";

export const KINDS: Record<OverlayKindName, OverlayKind> = { alerts: OverlayKind.ALERTS, goals: OverlayKind.GOALS };

/** How many configs one creator may keep: the list is answered whole. */
export const MAX_CONFIGS = 50;
const DEFAULT_DURATION_MS = 8000;

export function kindName(kind: OverlayKind): OverlayKindName {
  if (kind === OverlayKind.ALERTS) return "alerts";
  if (kind === OverlayKind.GOALS) return "goals";
  throw invalid("kind", "kind is OVERLAY_KIND_ALERTS or OVERLAY_KIND_GOALS");
}

export function configName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "") throw invalid("name", "name needs 1 to 80 characters");
  return maxLength("name", trimmed, 80);
}

/** The alert settings as stored: checked, defaults filled in. */
export function alertSettings(given: AlertSettings): AlertSettings {
  const min = given.minAmount;
  if (min && (!/^[A-Z]{3}$/.test(min.currency) || min.minorUnits < 0n)) {
    throw invalid("alerts.min_amount", "alerts.min_amount is a non-negative amount with an ISO currency");
  }
  const duration = given.durationMs === 0 ? DEFAULT_DURATION_MS : given.durationMs;
  if (duration < 1000 || duration > 60_000) throw invalid("alerts.duration_ms", "alerts.duration_ms is 1000 to 60000");
  optionalUrl("alerts.sound_url", given.soundUrl);
  if (given.soundVolume < 0 || given.soundVolume > 100)
    throw invalid("alerts.sound_volume", "alerts.sound_volume is 0 to 100");
  maxLength("alerts.template", given.template, 200);
  return create(AlertSettingsSchema, { ...given, durationMs: duration });
}

/** The goal settings as stored: a goal id is required, the style defaults to a bar. */
export function goalSettings(given: GoalSettings): GoalSettings {
  if (given.goalId === "") throw invalid("goals.goal_id", "goals.goal_id names the goal the overlay shows");
  return create(GoalSettingsSchema, {
    ...given,
    style: given.style === GoalStyle.UNSPECIFIED ? GoalStyle.BAR : given.style,
  });
}

/** The section a request may carry for a kind; the other kind's section is refused, never dropped. */
export function sectionOf(
  kind: OverlayKindName,
  request: OverlayConfigRequest,
): AlertSettings | GoalSettings | undefined {
  if (kind === "alerts") {
    if (request.goals) throw invalid("goals", "goals settings belong to a goals config");
    return request.alerts && alertSettings(request.alerts);
  }
  if (request.alerts) throw invalid("alerts", "alerts settings belong to an alerts config");
  return request.goals && goalSettings(request.goals);
}

/** The settings a new config starts with when the request sends none (alerts only: a goals config must name its goal). */
export function defaultSection(kind: OverlayKindName): AlertSettings {
  if (kind === "goals") throw invalid("goals.goal_id", "goals.goal_id names a goal (gol_…)");
  return alertSettings(create(AlertSettingsSchema));
}
