import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import type { AiContext } from "../context.js";

type Handlers = Pick<
  ServiceImpl<typeof AiService>,
  "listProviders" | "registerProvider" | "updateProvider" | "disableProvider" | "enableProvider" | "resetProvider"
>;

// STUB: replaced by its owner.
const unbuilt = () => {
  throw new ConnectError("not built yet", Code.Unimplemented);
};

/** Providers and their breakers. */
export function providerHandlers(_ctx: AiContext): Handlers {
  return {
    listProviders: unbuilt,
    registerProvider: unbuilt,
    updateProvider: unbuilt,
    disableProvider: unbuilt,
    enableProvider: unbuilt,
    resetProvider: unbuilt,
  };
}
