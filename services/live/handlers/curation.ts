import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { DigestSchema, DiscoveryWriteResultSchema, MomentSchema } from "../../../gen/pf/live/v1/discovery_pb.js";
import type { LiveService } from "../../../gen/pf/live/v1/live_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import { newId } from "../../kit/handler/ids.js";
import { invalid } from "../../kit/handler/problem.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import type { LiveContext } from "../context.js";
import { requireChannel } from "../db/channels.js";
import { insertMoment, putCuration } from "../db/discovery.js";
import { normalUsername } from "../domain/channels.js";

type CurationHandlers = Pick<ServiceImpl<typeof LiveService>, "putFeatured" | "putStar" | "addMoment" | "putDigest">;

/** A calendar day as YYYY-MM-DD (the pattern checked its shape; this, that it is a day). */
function requireDay(day: string): string {
  if (Number.isNaN(Date.parse(`${day}T00:00:00Z`)) || new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) !== day)
    throw invalid("day", "day must be a calendar day, YYYY-MM-DD.");
  return day;
}

/** Staff's featured rotation, stars and digests, and AI moments (designed). */
export function curationHandlers(ctx: LiveContext): CurationHandlers {
  return {
    async putFeatured(request) {
      const usernames = request.usernames.map(normalUsername);
      const periodMs = request.periodSeconds > 0 ? request.periodSeconds * 1000 : undefined;
      await ctx.transaction((em) => putCuration(em, "featured", { usernames, periodMs }, ctx.clock.now()));
      return create(DiscoveryWriteResultSchema, { featured: usernames });
    },

    async putStar(request) {
      const day = requireDay(request.day);
      const channel = await requireChannel(ctx, request.username);
      await ctx.transaction((em) => putCuration(em, `star:${day}`, { username: channel.username }, ctx.clock.now()));
      return create(DiscoveryWriteResultSchema, { star: channel.username });
    },

    async addMoment(request, call) {
      // A retry under the same Idempotency-Key answers the first add (README "Moments").
      const once = idempotencyOf(call, request, { scope: `moment:${principalOf(call).sub}`, required: true });
      const channel = await requireChannel(ctx, request.username);
      return ctx.transaction((em) =>
        once.run(em, async () => {
          const moment = {
            id: newId("lmo"),
            text: request.text.trim(),
            streamId: request.streamId,
            clipId: request.clipId,
          };
          await insertMoment(em, { ...moment, owner: channel.owner }, ctx.clock.now());
          return create(DiscoveryWriteResultSchema, { moment: create(MomentSchema, moment) });
        }),
      );
    },

    async putDigest(request) {
      const digest = create(DigestSchema, {
        day: requireDay(request.day),
        title: request.title.trim(),
        entries: request.entries.map((entry) => ({ ...entry, username: normalUsername(entry.username) })),
      });
      const body = {
        day: digest.day,
        title: digest.title,
        entries: digest.entries.map(({ title, text, username }) => ({ title, text, username })),
      };
      await ctx.transaction((em) => putCuration(em, `digest:${digest.day}`, body, ctx.clock.now()));
      return create(DiscoveryWriteResultSchema, { digest });
    },
  };
}
