import type { ServiceImpl } from "@connectrpc/connect";
import type { TipsOverlayService } from "../../../gen/pf/tips/v1/overlays_pb.js";
import { StreamSlots } from "../../kit/rpc/stream-slots.js";
import type { TipsContext } from "../context.js";
import { overlayConfigHandlers } from "./overlay-configs.js";
import { OverlayHub } from "../live/hub.js";
import { overlayStreamHandlers } from "./overlay-stream.js";
import { overlayTokenHandlers } from "./overlay-tokens.js";

/** Every TipsOverlayService method of one instance; its open streams share one live feed and one count of slots. */
export function overlayHandlers(ctx: TipsContext): ServiceImpl<typeof TipsOverlayService> {
  const hub = new OverlayHub(ctx.bus, ctx.logger);
  const slots = new StreamSlots();
  return { ...overlayConfigHandlers(ctx), ...overlayTokenHandlers(ctx), ...overlayStreamHandlers(ctx, hub, slots) };
}
