import type { HandlerContext } from "@connectrpc/connect";
import { StaffRole } from "../../gen/pf/network/v1/network_pb.js";
import { callerOf } from "../kit/auth/principal.js";
import type { RelationResolver } from "../kit/rpc/relations.js";
import type { GamesContext } from "./context.js";

/** Who performs a manage action, as its audit row and event name them. */
export interface Manager {
  /** svc:<key>, app:<id>, or the usr_ of a network owner or admin. */
  actor: string;
  /** The person a service acts for (X-PF-Subject), "" for none. */
  actingFor: string;
  /** The access rule that admitted the call (games.proto). */
  admittedBy: "capability" | "network_staff";
  /** owner or admin for a person admitted by network's staff list. */
  staffRole: string;
}

/** The roles of network's staff list, as the manage routes' `network_staff` rule names them (owner, admin). */
const STAFF_ROLES = new Map([
  [StaffRole.OWNER, "owner"],
  [StaffRole.ADMIN, "admin"],
  [StaffRole.GLOBAL_MODERATOR, "global_moderator"],
]);

/**
 * The relation games' protos declare: `network_staff`, the role network's staff list gives a person, asked of
 * network now, never taken from a header or a token claim. The kit enforces it before the handler (the manage
 * routes take owner and admin, 403 auth.staff_required otherwise); network not answering is its 503
 * relation.unavailable, neither "staff" nor "not staff".
 */
export const networkStaff = {
  network_staff: async (ctx, { person }) => {
    if (!person.startsWith("usr_")) return undefined;
    const { staff } = await ctx.network.listStaff({}, { timeoutMs: ctx.settings.networkTimeoutMs });
    const entry = staff.find((each) => each.subject?.id === person);
    return entry === undefined ? undefined : STAFF_ROLES.get(entry.role);
  },
} satisfies Record<string, RelationResolver<GamesContext>>;

/**
 * The manager of a manage call, as the rule that admitted it says: a service or first-party app holding
 * games.mod.manage (`capability`; a service's X-PF-Subject is recorded as whom it acted for), or a person whose
 * `network_staff` role the kit found.
 */
export function auditedManager(call: HandlerContext): Manager {
  const { principal, admittedBy, relation } = callerOf(call);
  if (admittedBy === "network_staff")
    return { actor: principal.sub, actingFor: "", admittedBy, staffRole: relation?.role ?? "" };
  return { actor: principal.sub, actingFor: principal.actingSubject ?? "", admittedBy: "capability", staffRole: "" };
}
