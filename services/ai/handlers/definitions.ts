import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import type { AiContext } from "../context.js";

type Handlers = Pick<
  ServiceImpl<typeof AiService>,
  | "createRouteVersion"
  | "setRouteVersionStatus"
  | "createPromptVersion"
  | "setPromptVersionStatus"
  | "createWorkflowVersion"
  | "setWorkflowVersionStatus"
  | "setRouteStatus"
  | "listDefinitions"
>;

// STUB: replaced by its owner.
const unbuilt = () => {
  throw new ConnectError("not built yet", Code.Unimplemented);
};

/** Prompt templates, workflow definitions and routing profiles: versions and their lifecycle. */
export function definitionHandlers(_ctx: AiContext): Handlers {
  return {
    createRouteVersion: unbuilt,
    setRouteVersionStatus: unbuilt,
    createPromptVersion: unbuilt,
    setPromptVersionStatus: unbuilt,
    createWorkflowVersion: unbuilt,
    setWorkflowVersionStatus: unbuilt,
    setRouteStatus: unbuilt,
    listDefinitions: unbuilt,
  };
}
