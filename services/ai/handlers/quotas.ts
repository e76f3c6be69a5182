import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import type { AiContext } from "../context.js";

type Handlers = Pick<ServiceImpl<typeof AiService>, "listQuotas" | "setQuota">;

// STUB: replaced by its owner.
const unbuilt = () => {
  throw new ConnectError("not built yet", Code.Unimplemented);
};

/** Quotas and their windows. */
export function quotaHandlers(_ctx: AiContext): Handlers {
  return {
    listQuotas: unbuilt,
    setQuota: unbuilt,
  };
}
