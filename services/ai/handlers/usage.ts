import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import type { AiContext } from "../context.js";

type Handlers = Pick<
  ServiceImpl<typeof AiService>,
  "listRuns" | "getUsage" | "getSummary" | "listAudit" | "listRequests"
>;

// STUB: replaced by its owner.
const unbuilt = () => {
  throw new ConnectError("not built yet", Code.Unimplemented);
};

/** Usage reads: runs, usage totals, the summary, the audit log and the request log. */
export function usageHandlers(_ctx: AiContext): Handlers {
  return {
    listRuns: unbuilt,
    getUsage: unbuilt,
    getSummary: unbuilt,
    listAudit: unbuilt,
    listRequests: unbuilt,
  };
}
