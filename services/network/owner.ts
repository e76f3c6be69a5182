import type { RelationResolver } from "../kit/rpc/relations.js";
import type { NetworkContext } from "./context.js";
import { isNetworkOwner } from "./db/staff.js";

/**
 * The relation network's admin protos declare: `owner`, the one person the staff list names owner ("the owner sets"
 * the code-hosting token). The kit enforces it before the handler: 403 integration.github.owner_only to anyone
 * else, 503 relation.unavailable when the database does not answer.
 */
export const ownerRelation = {
  owner: async (ctx, { person }) => ((await isNetworkOwner(ctx.orm.em.fork(), person)) ? "owner" : undefined),
} satisfies Record<string, RelationResolver<NetworkContext>>;
