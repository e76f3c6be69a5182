import { resolverDecision, type RelationResolver } from "../kit/rpc/relations.js";
import { authClassOf } from "./catalogue/descriptor.js";
import type { ToolsContext } from "./context.js";

/**
 * The relation tools.proto declares, enforced by the kit before the handler. `tool`: the auth class of the tool
 * the path names (anonymous, signed_in or probe), the same for every caller; an unknown, planned or mirror tool
 * is its 404 for everyone.
 */
export const toolsRelations = {
  tool: async (ctx, { scope }) => {
    try {
      return authClassOf(ctx.catalogue.available(scope));
    } catch (error) {
      throw resolverDecision(error as Error);
    }
  },
} satisfies Record<string, RelationResolver<ToolsContext>>;
