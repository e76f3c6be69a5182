import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import type { AiContext } from "../context.js";

type Handlers = Pick<
  ServiceImpl<typeof AiService>,
  "createRun" | "chat" | "classify" | "embed" | "enrich" | "extract" | "generate" | "summarize"
>;

// STUB: replaced by its owner.
const unbuilt = () => {
  throw new ConnectError("not built yet", Code.Unimplemented);
};

/** Workflow runs and the direct operations (run create). */
export function runHandlers(_ctx: AiContext): Handlers {
  return {
    createRun: unbuilt,
    chat: unbuilt,
    classify: unbuilt,
    embed: unbuilt,
    enrich: unbuilt,
    extract: unbuilt,
    generate: unbuilt,
    summarize: unbuilt,
  };
}
