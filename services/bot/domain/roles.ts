/** A person's role on a robot: its owner, or an operator entry's role. */
export type Role = "owner" | "operator" | "queue" | "viewer";

/** Roles that drive a robot on /control (the spec: "owner, operator or queue"); viewers only read. */
export const CONTROL_ROLES: readonly Role[] = ["owner", "operator", "queue"];

/** Roles a person's own token reads a robot with (the spec: "owner, operator or viewer"). */
export const READ_ROLES: readonly Role[] = ["owner", "operator", "viewer"];

/** The role a person holds on a robot: owner, their operator entry's role, or none. */
export function roleOf(robot: { owner: string }, person: string, entryRole: string | undefined): Role | undefined {
  if (robot.owner === person) return "owner";
  return entryRole as Role | undefined;
}

/** Whether an operator's allowlist takes a command (an empty list takes any; the owner has none). */
export function allowed(commands: readonly string[], name: string): boolean {
  return commands.length === 0 || commands.includes(name);
}

/** The robot's turn for `queue` operators: who holds it and until when ("" and null for nobody). */
export interface Turn {
  holder: string;
  until: Date | null;
}

/**
 * A `queue` operator's command takes the robot's turn when nobody else holds
 * it now, and holds it `turnMs` from that command; while another holds it,
 * the command is refused. Owners and operators need no turn.
 */
export function takeTurn(turn: Turn, person: string, now: Date, turnMs: number): Turn | undefined {
  const held = turn.holder !== "" && turn.holder !== person && turn.until !== null && turn.until > now;
  return held ? undefined : { holder: person, until: new Date(now.getTime() + turnMs) };
}
