import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import type { AiContext } from "../context.js";

type Handlers = Pick<ServiceImpl<typeof AiService>, "listModels" | "registerModel" | "updateModel">;

// STUB: replaced by its owner.
const unbuilt = () => {
  throw new ConnectError("not built yet", Code.Unimplemented);
};

/** Models of providers. */
export function modelHandlers(_ctx: AiContext): Handlers {
  return {
    listModels: unbuilt,
    registerModel: unbuilt,
    updateModel: unbuilt,
  };
}
