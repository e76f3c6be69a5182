import { create } from "@bufbuild/protobuf";
import { timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { ClipSchema, SlotSchema, type Clip, type Slot } from "../../../gen/pf/live/v1/channels_pb.js";
import { CameraSchema, StreamSchema, VodSchema, type Stream, type Vod } from "../../../gen/pf/live/v1/streams_pb.js";
import { controlsOf } from "../domain/streams.js";

/** A time as pg answers it (text, or a Date through MikroORM), as a proto timestamp; absent for null. */
export function timeOf(value: string | Date | null | undefined): Timestamp | undefined {
  return value === null || value === undefined ? undefined : timestampFromDate(new Date(value));
}

/** The columns every stream read selects (`s` the stream, `c` its channel), its viewers and its newest VOD. */
export const STREAM_SELECT = `
  s.id, s.title, s.state, s.playback_protocol, s.playback_url, s.video_codec, s.width, s.height, s.fps,
  s.audio_codec, s.slot_id, s.started_at, s.ended_at, s.end_reason, s.owner, coalesce(c.username, '') as username,
  (select count(*) from {viewers} v where v.stream_id = s.id and v.seen_at > $1)::int as viewer_count,
  r.id as vod_id, r.title as vod_title, r.url as vod_url, r.duration_seconds as vod_duration,
  r.listing as vod_listing, r.at as vod_at
  from {streams} s
  left join {channels} c on c.owner = s.owner
  left join lateral (
    select * from {recordings} r where r.kind = 'vod' and r.stream_id = s.id and (r.listing = 'public' or $2)
    order by r.at desc limit 1
  ) r on true`;

/** A row of STREAM_SELECT. */
export interface StreamSelectRow {
  id: string;
  title: string;
  state: string;
  playback_protocol: string;
  playback_url: string;
  video_codec: string;
  width: number;
  height: number;
  fps: number;
  audio_codec: string;
  slot_id: string;
  started_at: string | null;
  ended_at: string | null;
  end_reason: string;
  owner: string;
  username: string;
  viewer_count: number;
  vod_id: string | null;
  vod_title: string | null;
  vod_url: string | null;
  vod_duration: number | null;
  vod_listing: string | null;
  vod_at: string | null;
}

/** A stream as every route answers it: playback only while live, one camera once media flows. */
export function streamOf(row: StreamSelectRow): Stream {
  const live = row.state === "live";
  return create(StreamSchema, {
    id: row.id,
    username: row.username,
    title: row.title,
    state: row.state,
    playback: { protocol: live ? row.playback_protocol : "none", url: live ? row.playback_url : "" },
    cameras:
      row.video_codec === ""
        ? []
        : [
            create(CameraSchema, {
              name: "main",
              videoCodec: row.video_codec,
              width: row.width,
              height: row.height,
              fps: row.fps,
              audioCodec: row.audio_codec,
            }),
          ],
    controls: controlsOf(row.playback_protocol, live),
    viewerCount: live ? row.viewer_count : 0,
    startedAt: timeOf(row.started_at),
    endedAt: timeOf(row.ended_at),
    endReason: row.end_reason,
    slotId: row.slot_id,
    vod:
      row.vod_id === null
        ? undefined
        : vodOf({
            id: row.vod_id,
            stream_id: row.id,
            title: row.vod_title!,
            url: row.vod_url!,
            duration_seconds: row.vod_duration!,
            listing: row.vod_listing!,
            at: row.vod_at,
          }),
  });
}

/** A recording row as pg answers it. */
export interface RecordingSelectRow {
  id: string;
  stream_id: string;
  title: string;
  url: string;
  duration_seconds: number;
  listing: string;
  at: string | Date | null;
  taken_by?: string;
}

export function vodOf(row: RecordingSelectRow): Vod {
  return create(VodSchema, {
    id: row.id,
    streamId: row.stream_id,
    title: row.title,
    url: row.url,
    durationSeconds: row.duration_seconds,
    listing: row.listing,
    publishedAt: timeOf(row.at),
  });
}

export function clipOf(row: RecordingSelectRow): Clip {
  return create(ClipSchema, {
    id: row.id,
    streamId: row.stream_id,
    title: row.title,
    url: row.url,
    durationSeconds: row.duration_seconds,
    listing: row.listing,
    takenBy: row.taken_by ?? "",
    takenAt: timeOf(row.at),
  });
}

/** A slot row as pg answers it, with the live stream broadcasting in it. */
export interface SlotSelectRow {
  id: string;
  title: string;
  starts_at: string | Date;
  ends_at: string | Date;
  listing: string;
  current_stream_id: string | null;
}

export function slotOf(row: SlotSelectRow): Slot {
  return create(SlotSchema, {
    id: row.id,
    title: row.title,
    startsAt: timeOf(row.starts_at),
    endsAt: timeOf(row.ends_at),
    listing: row.listing,
    currentStreamId: row.current_stream_id ?? "",
  });
}
