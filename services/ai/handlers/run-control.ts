import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import type { AiContext } from "../context.js";

type Handlers = Pick<ServiceImpl<typeof AiService>, "getRun" | "cancelRun" | "retryRun">;

// STUB: replaced by its owner.
const unbuilt = () => {
  throw new ConnectError("not built yet", Code.Unimplemented);
};

/** Reading, canceling and retrying a run. */
export function runControlHandlers(_ctx: AiContext): Handlers {
  return {
    getRun: unbuilt,
    cancelRun: unbuilt,
    retryRun: unbuilt,
  };
}
