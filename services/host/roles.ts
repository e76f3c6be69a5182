import { problem } from "../kit/handler/problem.js";
import { resolverDecision, type RelationResolver } from "../kit/rpc/relations.js";
import type { HostContext } from "./context.js";
import { accessTo, notFoundOf, type ProjectAccess } from "./db/access.js";

/** A sandbox token (env=sandbox) touches sandbox projects only. */
function refuseSandbox(found: ProjectAccess, env: string | undefined): void {
  if (env === "sandbox" && found.environment === "production")
    throw resolverDecision(problem(403, "host.sandbox_refused", "A sandbox token is refused on a production project."));
}

/**
 * The relations host.proto declares, enforced by the kit before the handler, each one statement from the path's
 * object to its project. `project`: the principal's role in the project of the object the path names (a project,
 * site, deploy, deleted or not, or domain); no role at all is the object's 404, so its existence is not confirmed.
 * `network_staff`: any role on network's staff list, asked of network now, on an object the token may touch.
 */
export const hostRelations = {
  project: async (ctx, { person, scope, env }) => {
    const found = await accessTo(ctx, scope, person);
    if (found.role === null) throw notFoundOf(scope);
    refuseSandbox(found, env);
    return found.role;
  },
  network_staff: async (ctx, { person, scope, env }) => {
    refuseSandbox(await accessTo(ctx, scope, person), env);
    if (!person.startsWith("usr_")) return undefined;
    const { staff } = await ctx.network.listStaff({}, { timeoutMs: ctx.settings.networkTimeoutMs });
    return staff.some((each) => each.subject?.id === person) ? "staff" : undefined;
  },
} satisfies Record<string, RelationResolver<HostContext>>;
