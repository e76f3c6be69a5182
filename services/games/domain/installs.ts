import { problem } from "../../kit/handler/problem.js";

/** An install's status as stored. */
export type Status = "disabled" | "enabled" | "revoked";

/** A manage action as audited and published: the last token of its games.mod.* subject. */
export type Action = "installed" | "enabled" | "disabled" | "granted" | "ungranted" | "revoked";

/** What an action on an existing install asks for. */
export type Change =
  { action: "enabled" | "disabled" | "revoked" } | { action: "granted" | "ungranted"; capability: string };

/** The part of an install the rules read. */
export interface InstallState {
  status: Status;
  requested: readonly string[];
  granted: readonly string[];
}

/**
 * The install's status and grants after a change, or null when it changes
 * nothing (enable of an enabled install, a grant already held): such a call
 * is answered as it stands, unaudited and unpublished. A revoked install
 * takes nothing (409 games.mod_revoked). Only a capability the manifest
 * requested can be granted or ungranted (422 games.capability_not_requested):
 * granted ⊆ requested always. Nothing here reads the trust tier.
 */
export function applyChange(state: InstallState, change: Change): { status: Status; granted: string[] } | null {
  if (state.status === "revoked")
    throw problem(409, "games.mod_revoked", "This mod install was revoked for good: nothing can be done to it.");
  switch (change.action) {
    case "enabled":
    case "disabled":
      return state.status === change.action ? null : { status: change.action, granted: [...state.granted] };
    case "revoked":
      return { status: "revoked", granted: [...state.granted] };
    case "granted":
    case "ungranted": {
      const { capability } = change;
      if (!state.requested.includes(capability))
        throw problem(
          422,
          "games.capability_not_requested",
          `The mod's manifest does not request ${capability}: only requested capabilities can be granted.`,
          { capability, requested: [...state.requested] },
        );
      const held = state.granted.includes(capability);
      if (change.action === "granted")
        return held ? null : { status: state.status, granted: [...state.granted, capability].sort() };
      return held ? { status: state.status, granted: state.granted.filter((each) => each !== capability) } : null;
    }
  }
}

/** What a mod may do from the next server tick: its grants while enabled, nothing otherwise. */
export function activeCapabilities(status: Status, granted: readonly string[]): string[] {
  return status === "enabled" ? [...granted] : [];
}
