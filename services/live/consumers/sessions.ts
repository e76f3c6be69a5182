import { timestampDate } from "@bufbuild/protobuf/wkt";
import { RestreamSessionEventSchema } from "../../../gen/pf/restream/v1/events_pb.js";
import { consumer, type Consumer } from "../../kit/events/consumer.js";
import { refreshSearchDocuments } from "../../kit/search-documents/record.js";
import type { LiveContext } from "../context.js";
import { ensureChannel, lockChannel, markLive } from "../db/channels.js";
import { channelDocumentIds, channelDocuments } from "../db/search.js";
import { applySession } from "../db/streams.js";
import { streamChanged } from "../events.js";

const SUBJECTS = ["restream.session.started", "restream.session.ended", "restream.session.interrupted"];

/**
 * Restream's sessions as broadcasts on their owners' channels: started is live with its playback endpoint, ended
 * and interrupted end it (final, whatever order the events come in). Only the slot of the external refs is kept:
 * nothing else restream sends about a stream reaches a table or an answer.
 */
export const sessionConsumers: Consumer<LiveContext>[] = SUBJECTS.map((subject) =>
  consumer<LiveContext, typeof RestreamSessionEventSchema>({
    name: `sessions-${subject.split(".")[2]}`,
    subject,
    event: RestreamSessionEventSchema,
    from: "all",
    async handle(event, em, _meta, ctx) {
      if (!event.sessionId || !event.owner.startsWith("usr_")) return;
      const at = event.at ? timestampDate(event.at) : ctx.clock.now();
      await ensureChannel(em, event.owner, at);
      // The username as the channel's committed changes left it ("" before network named the owner).
      const username = (await lockChannel(em, event.owner)) ?? "";
      const applied = await applySession(
        em,
        {
          sessionId: event.sessionId,
          owner: event.owner,
          title: event.title,
          state: event.state,
          playbackProtocol: event.playback?.protocol ?? "none",
          playbackUrl: event.playback?.protocol === "none" ? "" : (event.playback?.url ?? ""),
          videoCodec: event.media?.videoCodec ?? "",
          width: event.media?.width ?? 0,
          height: event.media?.height ?? 0,
          fps: event.media?.fps ?? 0,
          audioCodec: event.media?.audioCodec ?? "",
          slotId: /^lsl_[a-z0-9]{1,64}$/.test(event.externalRefs.slot ?? "") ? event.externalRefs.slot : "",
          startedAt: event.startedAt ? timestampDate(event.startedAt) : null,
          endedAt: event.endedAt ? timestampDate(event.endedAt) : null,
          endReason: event.endReason,
        },
        at,
      );
      if (applied.after === "live") await markLive(em, event.owner, applied.startedAt ?? at);
      if (applied.before !== applied.after) await streamChanged(em, applied, username, ctx.clock.now());
      await refreshSearchDocuments(em, channelDocuments, await channelDocumentIds(em, event.owner), ctx.clock.now());
    },
  }),
);
