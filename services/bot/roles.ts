import type { EntityManager } from "@mikro-orm/postgresql";
import type { RelationResolver } from "../kit/rpc/relations.js";
import type { BotContext } from "./context.js";
import { deviceById, deviceNotFound } from "./db/devices.js";
import { operatorEntry, robotById, robotNotFound } from "./db/robots.js";
import { roleOf, type Role } from "./domain/roles.js";

/** A person's role on a robot (deleted or not), or undefined when the robot does not exist or they hold none. */
export async function personRole(em: EntityManager, robotId: string, person: string): Promise<Role | undefined> {
  const robot = await robotById(em, robotId);
  if (!robot) return undefined;
  return roleOf(robot, person, (await operatorEntry(em, robotId, person))?.role);
}

/**
 * The relations bot's protos declare, enforced by the kit before the handler: `robot`, a person's role on the robot
 * the path names, and `device_robot`, their role on the robot of the device it names. A person holding no role at all
 * is answered the robot's (or device's) 404, as a missing one: the spec holds a person's own token to robots it has a
 * role on, and another's robot is not theirs to learn of. A role the route does not take is 403 auth.role_required.
 */
export const robotRoles = {
  robot: async (ctx, { person, scope }) => {
    const role = await personRole(ctx.orm.em.fork(), scope, person);
    if (role === undefined) throw robotNotFound();
    return role;
  },
  device_robot: async (ctx, { person, scope }) => {
    const em = ctx.orm.em.fork();
    const device = await deviceById(em, scope);
    const role = device && (await personRole(em, device.robotId, person));
    if (!role) throw deviceNotFound();
    return role;
  },
} satisfies Record<string, RelationResolver<BotContext>>;
