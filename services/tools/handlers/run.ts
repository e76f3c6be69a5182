import type { ServiceImpl } from "@connectrpc/connect";
import type { ToolsService } from "../../../gen/pf/tools/v1/tools_pb.js";
import type { ToolsContext } from "../context.js";

type Handlers = Pick<ServiceImpl<typeof ToolsService>, "runTool">;

/** The run API: one route, each tool's auth class enforced by the kit (the `tool` relation) before it. */
export function runHandlers(_ctx: ToolsContext): Handlers {
  return {
    runTool() {
      throw new Error("not built yet");
    },
  };
}
