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

/** A config's name, trimmed: on create one is required (the contract holds a sent one to 1 to 80 characters). */
export function configName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "") throw invalid("name", "name needs 1 to 80 characters");
  return trimmed;
}

/**
 * The alert settings as stored: checked, defaults filled in (the duration,
 * volume and template are held to their bounds by the contract's rules).
 */
export function alertSettings(given: AlertSettings): AlertSettings {
  const min = given.minAmount;
  if (min && (!/^[A-Z]{3}$/.test(min.currency) || min.minorUnits < 0n)) {
    throw invalid("alerts.min_amount", "alerts.min_amount is a non-negative amount with an ISO currency");
  }
  optionalUrl("alerts.sound_url", given.soundUrl);
  return create(AlertSettingsSchema, { ...given, durationMs: given.durationMs || DEFAULT_DURATION_MS });
}

/** The goal settings as stored (the contract requires the goal id): the style defaults to a bar. */
export function goalSettings(given: GoalSettings): GoalSettings {
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
