import type { Worker } from "../../kit/service/module.js";
import type { SpaceContext } from "../context.js";
import { upsertSpace } from "../db/spaces.js";

/**
 * PF_SPACE_SEED's spaces, created or updated once at start (designed: the
 * spec shows no route that creates a space), so `npm start` serves a forum.
 * Upserts are idempotent, so instances starting together agree.
 */
export const seedSpaces: Worker<SpaceContext> = async (ctx) => {
  if (ctx.settings.seed.length > 0) {
    await ctx.transaction(async (em) => {
      for (const space of ctx.settings.seed) await upsertSpace(em, space, ctx.clock.now());
    });
  }
  return async () => undefined;
};
