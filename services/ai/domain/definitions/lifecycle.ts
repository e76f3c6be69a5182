import { invalid, problem } from "../../../kit/handler/problem.js";

/** Prompt templates, workflow definitions and routing profiles. */
export const DEFINITION_KINDS = ["prompt", "workflow", "route"] as const;
export type DefinitionKind = (typeof DEFINITION_KINDS)[number];

export const VERSION_STATUSES = ["draft", "active", "deprecated", "archived"] as const;
export type VersionStatus = (typeof VERSION_STATUSES)[number];

export const ROUTE_STATUSES = ["active", "disabled"] as const;
export type RouteStatus = (typeof ROUTE_STATUSES)[number];

/**
 * The moves a version may make: draft → active → deprecated → archived, a draft abandoned (archived), a deprecated
 * version reactivated. Nothing leaves archived; an active version is deprecated first (activating another does it).
 */
const MOVES: Record<VersionStatus, readonly VersionStatus[]> = {
  draft: ["active", "archived"],
  active: ["deprecated"],
  deprecated: ["active", "archived"],
  archived: [],
};

/** The status a request names for a version: one of the four, else 400 naming `status`. */
export function versionStatusOf(status: string): VersionStatus {
  if ((VERSION_STATUSES as readonly string[]).includes(status)) return status as VersionStatus;
  throw invalid("status", `A version's status is one of ${VERSION_STATUSES.join(", ")}.`);
}

/** The status a request names for a route: `active` or `disabled`, else 400 naming `status`. */
export function routeStatusOf(status: string): RouteStatus {
  if ((ROUTE_STATUSES as readonly string[]).includes(status)) return status as RouteStatus;
  throw invalid("status", `A route's status is ${ROUTE_STATUSES.join(" or ")}.`);
}

/**
 * Whether the move changes anything: false for the same status again (answered as it is), true for a move the
 * lifecycle allows; anything else is 409 ai.definition_state naming both statuses.
 */
export function versionMove(from: VersionStatus, to: VersionStatus): boolean {
  if (from === to) return false;
  if (MOVES[from].includes(to)) return true;
  throw problem(409, "ai.definition_state", `A ${from} version cannot become ${to}.`, { from, to });
}
