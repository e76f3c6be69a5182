import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { ToolsService } from "../../../gen/pf/tools/v1/tools_pb.js";
import { answerDocument } from "../../kit/feeds/answer.js";
import type { ToolsContext } from "../context.js";
import { Registry } from "../domain/registry/registry.js";

type Handlers = Pick<ServiceImpl<typeof ToolsService>, "listTools" | "getTool" | "getToolSchema">;

/**
 * Shared caches keep a registry document this long before revalidating (ETag, 304): it changes only when the
 * service starts again (a new catalogue, a binary installed or gone).
 */
const MAX_AGE_SECONDS = 300;

/** The registry: open to anyone, its documents built once per catalogue and live status, ETag and 304. */
export function registryHandlers(ctx: ToolsContext): Handlers {
  const registry = new Registry(ctx.catalogue, ctx.live);
  for (const tool of ctx.catalogue.tools) {
    const live = ctx.live.of(tool);
    if (tool.catalogue === "available" && live.status === "unavailable")
      ctx.logger.warn({ tool: tool.id, reason: live.reason, cause: live.cause }, "a tool does not run here");
  }
  const answer = (call: HandlerContext, body: Uint8Array) => ({
    body: answerDocument(call, { contentType: "application/json", body, maxAgeSeconds: MAX_AGE_SECONDS }),
  });
  return {
    async listTools(request, call) {
      return answer(call, registry.list(request));
    },
    async getTool(request, call) {
      return answer(call, registry.tool(request.id));
    },
    async getToolSchema(request, call) {
      return answer(call, registry.schema(request.id));
    },
  };
}
