import { Migration } from "@mikro-orm/migrations";

/** The live schema: channels, streams, slots, recordings, moments, curation, viewers and stats buckets. */
export class Migration20261220000000_live extends Migration {
  override up(): void {
    this.addSql(`create table channels (
      owner text primary key,
      username text null,
      display_name text not null,
      avatar_url text not null,
      bio_en text not null,
      subject_at timestamptz null,
      last_live_at timestamptz null,
      updated_at timestamptz not null
    )`);
    this.addSql(`alter table channels add constraint channels_username_unique unique (username)`);
    this.addSql(`create table streams (
      id text primary key,
      session_id text not null,
      owner text not null,
      title text not null,
      state text not null,
      playback_protocol text not null,
      playback_url text not null,
      video_codec text not null,
      width int not null,
      height int not null,
      fps double precision not null,
      audio_codec text not null,
      slot_id text not null,
      started_at timestamptz null,
      ended_at timestamptz null,
      end_reason text not null,
      updated_at timestamptz not null,
      constraint streams_state_check check (state in ('live', 'ended', 'interrupted'))
    )`);
    this.addSql(`alter table streams add constraint streams_session_unique unique (session_id)`);
    this.addSql(`create index streams_by_state on streams (state, started_at)`);
    this.addSql(`create index streams_by_owner on streams (owner, started_at)`);
    this.addSql(`create table slots (
      id text primary key,
      owner text not null,
      title text not null,
      starts_at timestamptz not null,
      ends_at timestamptz not null,
      listing text not null,
      updated_at timestamptz not null,
      constraint slots_listing_check check (listing in ('public', 'unlisted'))
    )`);
    this.addSql(`create index slots_by_owner on slots (owner, ends_at)`);
    this.addSql(`create table recordings (
      kind text not null,
      id text not null,
      stream_id text not null,
      owner text not null,
      title text not null,
      url text not null,
      duration_seconds int not null,
      listing text not null,
      taken_by text not null,
      at timestamptz not null,
      constraint recordings_pkey primary key (kind, id),
      constraint recordings_kind_check check (kind in ('vod', 'clip')),
      constraint recordings_listing_check check (listing in ('public', 'private'))
    )`);
    this.addSql(`create index recordings_by_owner on recordings (owner, kind, at)`);
    this.addSql(`create index recordings_by_stream on recordings (stream_id)`);
    this.addSql(`create index recordings_public on recordings (listing, at)`);
    this.addSql(`create table moments (
      id text primary key,
      owner text not null,
      text text not null,
      stream_id text not null,
      clip_id text not null,
      at timestamptz not null
    )`);
    this.addSql(`create index moments_by_time on moments (at)`);
    this.addSql(`create table curation (
      name text primary key,
      body jsonb not null,
      updated_at timestamptz not null
    )`);
    this.addSql(`create table viewers (
      stream_id text not null,
      viewer text not null,
      seen_at timestamptz not null,
      constraint viewers_pkey primary key (stream_id, viewer)
    )`);
    this.addSql(`create index viewers_by_time on viewers (seen_at)`);
    this.addSql(`create table stats_buckets (
      metric text not null,
      bucket_at timestamptz not null,
      value int not null,
      constraint stats_buckets_pkey primary key (metric, bucket_at)
    )`);
  }
}
