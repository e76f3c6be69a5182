import type { ServiceImpl } from "@connectrpc/connect";
import type { ToolsService } from "../../../gen/pf/tools/v1/tools_pb.js";
import type { ToolsContext } from "../context.js";

type Handlers = Pick<ServiceImpl<typeof ToolsService>, "listTools" | "getTool" | "getToolSchema">;

/** The registry: open to anyone, its documents built once per catalogue and live status, ETag and 304. */
export function registryHandlers(_ctx: ToolsContext): Handlers {
  const todo = (): never => {
    throw new Error("not built yet");
  };
  return { listTools: todo, getTool: todo, getToolSchema: todo };
}
