import type { Worker } from "../../kit/service/module.js";
import type { BotContext } from "../context.js";
import { instanceLinksClosed, touchLinks } from "../db/devices.js";

/**
 * The links this instance holds (on every instance, not leased: each marks its own): the hub listens to bot's
 * notices from the start, the devices it holds links to are marked heard from every PF_BOT_PRESENCE_EVERY_MS (a
 * device whose instance died goes offline after PF_BOT_PRESENCE_TIMEOUT_MS), and stopping ends every link held and
 * records their ends before the database closes (the devices are offline at once).
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
    await ctx.links.stop();
    // Links whose handler had not begun to record its end: their devices are offline now, not after the timeout.
    await ctx
      .transaction((em) => instanceLinksClosed(em, ctx.links.instance))
      .catch((error: unknown) => ctx.logger.warn({ err: error }, "device link ends not recorded at stop"));
  };
};
