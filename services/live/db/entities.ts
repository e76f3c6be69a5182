import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

/**
 * A channel: one per owner (usr_), readable once network named its handle (`username`, lower case, unique).
 * `subject_at` is the time of the newest network.subject.changed applied, so an older one never overwrites it.
 */
export const ChannelRow = defineEntity({
  name: "ChannelRow",
  tableName: "channels",
  uniques: [{ name: "channels_username_unique", properties: ["username"] }],
  properties: {
    owner: p.text().primary(),
    username: p.text().nullable(),
    displayName: p.text(),
    avatarUrl: p.text(),
    bioEn: p.text(),
    subjectAt: p.datetime().nullable(),
    lastLiveAt: p.datetime().nullable(),
    updatedAt: p.datetime(),
  },
});
export type ChannelRow = InferEntity<typeof ChannelRow>;

/** A broadcast: one restream session (`session_id`), live until an end or interruption, which is final. */
export const StreamRow = defineEntity({
  name: "StreamRow",
  tableName: "streams",
  uniques: [{ name: "streams_session_unique", properties: ["sessionId"] }],
  indexes: [
    { name: "streams_by_state", properties: ["state", "startedAt"] },
    { name: "streams_by_owner", properties: ["owner", "startedAt"] },
  ],
  checks: [{ name: "streams_state_check", expression: "state in ('live', 'ended', 'interrupted')" }],
  properties: {
    id: p.text().primary(),
    sessionId: p.text(),
    owner: p.text(),
    title: p.text(),
    state: p.text(),
    playbackProtocol: p.text(),
    playbackUrl: p.text(),
    videoCodec: p.text(),
    width: p.integer(),
    height: p.integer(),
    fps: p.double(),
    audioCodec: p.text(),
    slotId: p.text(),
    startedAt: p.datetime().nullable(),
    endedAt: p.datetime().nullable(),
    endReason: p.text(),
    updatedAt: p.datetime(),
  },
});
export type StreamRow = InferEntity<typeof StreamRow>;

/** A scheduled slot on a channel; `unlisted` ones are private listings. */
export const SlotRow = defineEntity({
  name: "SlotRow",
  tableName: "slots",
  indexes: [{ name: "slots_by_owner", properties: ["owner", "endsAt"] }],
  checks: [{ name: "slots_listing_check", expression: "listing in ('public', 'unlisted')" }],
  properties: {
    id: p.text().primary(),
    owner: p.text(),
    title: p.text(),
    startsAt: p.datetime(),
    endsAt: p.datetime(),
    listing: p.text(),
    updatedAt: p.datetime(),
  },
});
export type SlotRow = InferEntity<typeof SlotRow>;

/** A VOD or a clip of a stream (`kind`), public or private. */
export const RecordingRow = defineEntity({
  name: "RecordingRow",
  tableName: "recordings",
  indexes: [
    { name: "recordings_by_owner", properties: ["owner", "kind", "at"] },
    { name: "recordings_by_stream", properties: ["streamId"] },
    { name: "recordings_public", properties: ["listing", "at"] },
  ],
  checks: [
    { name: "recordings_kind_check", expression: "kind in ('vod', 'clip')" },
    { name: "recordings_listing_check", expression: "listing in ('public', 'private')" },
  ],
  properties: {
    kind: p.text().primary(),
    id: p.text().primary(),
    streamId: p.text(),
    owner: p.text(),
    title: p.text(),
    url: p.text(),
    durationSeconds: p.integer(),
    listing: p.text(),
    takenBy: p.text(),
    at: p.datetime(),
  },
});
export type RecordingRow = InferEntity<typeof RecordingRow>;

/** An AI moment of a channel. */
export const MomentRow = defineEntity({
  name: "MomentRow",
  tableName: "moments",
  indexes: [{ name: "moments_by_time", properties: ["at"] }],
  properties: {
    id: p.text().primary(),
    owner: p.text(),
    text: p.text(),
    streamId: p.text(),
    clipId: p.text(),
    at: p.datetime(),
  },
});
export type MomentRow = InferEntity<typeof MomentRow>;

/** Staff's curation: the featured rotation (`featured`), the star of a day (`star:YYYY-MM-DD`), a day's digest (`digest:YYYY-MM-DD`). */
export const CurationRow = defineEntity({
  name: "CurationRow",
  tableName: "curation",
  properties: {
    name: p.text().primary(),
    body: p.json<Record<string, unknown>>(),
    updatedAt: p.datetime(),
  },
});
export type CurationRow = InferEntity<typeof CurationRow>;

/** A viewer of a stream (a keyed hash of the caller) last seen at `seen_at`; flushed in batches, pruned by the roll-up. */
export const ViewerRow = defineEntity({
  name: "ViewerRow",
  tableName: "viewers",
  indexes: [{ name: "viewers_by_time", properties: ["seenAt"] }],
  properties: {
    streamId: p.text().primary(),
    viewer: p.text().primary(),
    seenAt: p.datetime(),
  },
});
export type ViewerRow = InferEntity<typeof ViewerRow>;

/** One bucket of a stats series: the metric's highest sample in it. */
export const StatsBucketRow = defineEntity({
  name: "StatsBucketRow",
  tableName: "stats_buckets",
  properties: {
    metric: p.text().primary(),
    bucketAt: p.datetime().primary(),
    value: p.integer(),
  },
});
export type StatsBucketRow = InferEntity<typeof StatsBucketRow>;

export const entities = [
  ChannelRow,
  StreamRow,
  SlotRow,
  RecordingRow,
  MomentRow,
  CurationRow,
  ViewerRow,
  StatsBucketRow,
];
