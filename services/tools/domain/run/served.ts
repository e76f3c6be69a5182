import { problem } from "../../../kit/handler/problem.js";
import type { ToolDescriptor } from "../../catalogue/descriptor.js";
import type { ToolsContext } from "../../context.js";
import { assertLive } from "../../families/live.js";

/**
 * The tool a run names, when this instance runs it: an available tool (else the catalogue's 404
 * tools.tool.not_found saying why), one the run API exposes (a tool with api false is a 404 too: the route serves
 * only tools with api true, so at this address there is nothing to run), whose family runs here (else 503
 * tools.tool.unavailable with the reason, e.g. no FFmpeg).
 */
export function servedTool(ctx: Pick<ToolsContext, "catalogue" | "live">, id: string): ToolDescriptor {
  const tool = ctx.catalogue.available(id);
  if (!tool.api)
    throw problem(
      404,
      "tools.tool.not_found",
      `The tool "${id}" has no run API; its descriptor's docs say how to use it.`,
      {
        tool: id,
        which: "no_api",
      },
    );
  assertLive(ctx.live, tool);
  return tool;
}
