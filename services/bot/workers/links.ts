import type { Worker } from "../../kit/service/module.js";
import type { BotContext } from "../context.js";
import { touchLinks } from "../db/devices.js";

/**
 * The links this instance holds (on every instance, not leased: each marks its own): the hub listens to bot's
 * notices from the start, the devices it holds links to are marked heard from every PF_BOT_PRESENCE_EVERY_MS (a
 * device whose instance died goes offline after PF_BOT_PRESENCE_TIMEOUT_MS), and stopping ends every link held.
 */
export const links: Worker<BotContext> = async (ctx) => {
  ctx.links.start();
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    const held = ctx.links.heldLinkIds();
    if (running || held.length === 0) return;
    running = ctx
      .transaction((em) => touchLinks(em, held, ctx.clock.now()))
      .catch((error: unknown) =>
        ctx.logger.warn({ err: error }, "device presence not marked; the next beat tries again"),
      )
      .finally(() => (running = undefined));
  }, ctx.settings.presenceEveryMs);
  return async () => {
    clearInterval(timer);
    await running;
    ctx.links.stop();
  };
};
