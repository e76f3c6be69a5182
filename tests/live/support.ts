import { create, toJsonString } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { SubjectChangedSchema } from "../../gen/pf/network/v1/events_pb.js";
import { RestreamSessionEventSchema } from "../../gen/pf/restream/v1/events_pb.js";
import { newId } from "../../services/kit/handler/ids.js";
import type { TestPlatform } from "../support/platform.js";
import { until } from "../support/until.js";

let n = 0;
/** A fresh person and handle. */
export const person = (tag = "p") => {
  const id = `${tag}${Date.now().toString(36)}${(n++).toString(36)}`;
  return { owner: `usr_${id}`, handle: `Chan_${id}`, username: `chan_${id}` };
};

/** Publishes an event on the bus as its owner's outbox relay would; answers the event id. */
async function publish(t: TestPlatform, subject: string, data: string): Promise<string> {
  const bus = t.platform.contexts.get("live")!.bus;
  const id = newId("evt");
  await bus.publish(subject, id, new TextEncoder().encode(data), { "Nats-Msg-Id": id });
  return id;
}

/** network.subject.changed for a person: their handle, display name and avatar, as of `at`. */
export function subjectChanged(
  t: TestPlatform,
  who: { owner: string; handle: string },
  at: Date,
  display: { displayName?: string; avatarUrl?: string } = {},
) {
  const event = create(SubjectChangedSchema, {
    subject: {
      id: who.owner,
      display: {
        handle: who.handle,
        displayName: display.displayName ?? "Streamer",
        avatarUrl: display.avatarUrl ?? "",
      },
    },
    occurredAt: timestampFromDate(at),
  });
  return publish(t, "network.subject.changed", toJsonString(SubjectChangedSchema, event));
}

/** A restream session event (started, ended or interrupted) of an owner's session. */
export function session(
  t: TestPlatform,
  verb: "started" | "ended" | "interrupted",
  fields: { sessionId: string; owner: string; title?: string; at: Date; refs?: Record<string, string> },
) {
  const live = verb === "started";
  const event = create(RestreamSessionEventSchema, {
    sessionId: fields.sessionId,
    streamId: "rst_stream1",
    owner: fields.owner,
    title: fields.title ?? "My stream",
    state: live ? "live" : verb,
    externalRefs: fields.refs ?? {},
    playback: live
      ? { protocol: "hls", url: `https://play.example/${fields.sessionId}.m3u8` }
      : { protocol: "none", reason: "ended" },
    media: { videoCodec: "h264", width: 1280, height: 720, fps: 30, audioCodec: "aac" },
    startedAt: timestampFromDate(fields.at),
    endedAt: live ? undefined : timestampFromDate(fields.at),
    endReason: live ? "" : "encoder_left",
    at: timestampFromDate(fields.at),
  });
  return publish(t, `restream.session.${verb}`, toJsonString(RestreamSessionEventSchema, event));
}

/** A fresh channel with a stream live since `at`: its names, session and stream id, once live reads it. */
export async function liveChannel(t: TestPlatform, at: Date, refs: Record<string, string> = {}) {
  const who = person();
  await subjectChanged(t, who, at);
  const sessionId = `rss_${who.owner.slice(4)}`;
  await session(t, "started", { sessionId, owner: who.owner, at, refs });
  let streamId = "";
  await until(async () => {
    const answer = await t.http("GET", `/live/api/streams/channel/${who.username}`);
    streamId = answer.body.channel?.streams?.[0]?.id ?? "";
    return streamId !== "";
  });
  return { ...who, sessionId, streamId };
}
