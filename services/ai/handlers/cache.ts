import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import type { AiContext } from "../context.js";

type Handlers = Pick<ServiceImpl<typeof AiService>, "getCacheStats" | "purgeCache">;

// STUB: replaced by its owner.
const unbuilt = () => {
  throw new ConnectError("not built yet", Code.Unimplemented);
};

/** The answer cache's statistics and purge. */
export function cacheHandlers(_ctx: AiContext): Handlers {
  return {
    getCacheStats: unbuilt,
    purgeCache: unbuilt,
  };
}
