import { StaffRole } from "../../../gen/pf/network/v1/network_pb.js";

const NAMES: Record<string, StaffRole> = {
  owner: StaffRole.OWNER,
  admin: StaffRole.ADMIN,
  global_moderator: StaffRole.GLOBAL_MODERATOR,
};

export function roleName(role: StaffRole): string | undefined {
  return Object.keys(NAMES).find((name) => NAMES[name] === role);
}

export function roleOf(name: string): StaffRole {
  return NAMES[name] ?? StaffRole.UNSPECIFIED;
}

/** The staff list reads owner first, then admins, then global moderators. */
export function byRank(a: { role: StaffRole; subject: string }, b: { role: StaffRole; subject: string }): number {
  return a.role - b.role || (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0);
}
