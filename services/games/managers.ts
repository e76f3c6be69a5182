import type { HandlerContext } from "@connectrpc/connect";
import { StaffRole } from "../../gen/pf/network/v1/network_pb.js";
import { callerOf } from "../kit/auth/principal.js";
import { problem } from "../kit/handler/problem.js";
import { notAnswered } from "../kit/runtime/call.js";
import type { GamesContext } from "./context.js";

/** Who performs a manage action, as its audit row and event name them. */
export interface Manager {
  /** svc:<key>, app:<id>, or the usr_ of a network owner or admin. */
  actor: string;
  /** The person a service acts for (X-PF-Subject), "" for none. */
  actingFor: string;
  admittedBy: "capability" | "network_staff";
  /** owner or admin for a person admitted by network's staff list. */
  staffRole: string;
}

/** The network staff roles that may manage mods ("a network owner or admin session"). */
const MANAGING_ROLES = new Map([
  [StaffRole.OWNER, "owner"],
  [StaffRole.ADMIN, "admin"],
]);

/**
 * The manager of a manage call. Services and first-party apps were admitted
 * by enforcement for holding games.mod.manage (a service's X-PF-Subject is
 * recorded as whom it acted for). A person's own token is admitted only if
 * network's staff list names them owner or admin, asked of network now, never
 * taken from a header or a token claim; 403 auth.staff_required otherwise.
 * Network not answering is 503 network.unavailable: neither "staff" nor "not
 * staff". Call it before the transaction.
 */
export async function managerOf(ctx: GamesContext, call: HandlerContext): Promise<Manager> {
  const { principal } = callerOf(call);
  if (principal.kind !== "user")
    return { actor: principal.sub, actingFor: principal.actingSubject ?? "", admittedBy: "capability", staffRole: "" };
  const role = principal.sub.startsWith("usr_") ? await staffRoleOf(ctx, principal.sub) : undefined;
  if (role === undefined)
    throw problem(
      403,
      "auth.staff_required",
      "Managing mods needs the games.mod.manage capability, or a person the network staff list names owner or admin.",
      { roles: [...MANAGING_ROLES.values()] },
    );
  return { actor: principal.sub, actingFor: "", admittedBy: "network_staff", staffRole: role };
}

/** The managing role (owner, admin) network's staff list gives a person, if any. */
async function staffRoleOf(ctx: GamesContext, person: string): Promise<string | undefined> {
  try {
    const { staff } = await ctx.network.listStaff({}, { timeoutMs: ctx.settings.networkTimeoutMs });
    const entry = staff.find((each) => each.subject?.id === person);
    return entry === undefined ? undefined : MANAGING_ROLES.get(entry.role);
  } catch (error) {
    if (notAnswered(error))
      throw problem(503, "network.unavailable", "The network service did not answer the staff list; try again later.");
    throw error;
  }
}
