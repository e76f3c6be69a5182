import type { MediaInfo } from "./control-plane.js";

/** FLV's codec ids (the tag header's 4 bits) and enhanced RTMP's FourCCs, by the names FFmpeg gives them. */
const VIDEO_CODECS: Record<string, string> = {
  "2": "h263",
  "3": "flashsv",
  "4": "vp6f",
  "5": "vp6a",
  "6": "flashsv2",
  "7": "h264",
  avc1: "h264",
  hvc1: "hevc",
  av01: "av1",
  vp09: "vp9",
};
const AUDIO_CODECS: Record<string, string> = {
  "0": "pcm",
  "1": "adpcm",
  "2": "mp3",
  "3": "pcm",
  "4": "nellymoser",
  "5": "nellymoser",
  "6": "nellymoser",
  "7": "pcm_alaw",
  "8": "pcm_mulaw",
  "10": "aac",
  "11": "speex",
  Opus: "opus",
  fLaC: "flac",
  "ac-3": "ac3",
  "ec-3": "eac3",
  ".mp3": "mp3",
  mp4a: "aac",
};

/** What a publisher sends, as read from its packets' codec ids and its onMetaData. */
export interface PublishedMedia {
  videoCodecId?: number;
  audioCodecId?: number;
  width?: number;
  height?: number;
  fps?: number;
}

/** The session's media info: codec names (`none` when the track is absent, `unknown` for an id we do not name). */
export function mediaInfoOf(media: PublishedMedia): MediaInfo {
  return {
    videoCodec: codecName(VIDEO_CODECS, media.videoCodecId),
    width: whole(media.width),
    height: whole(media.height),
    fps: positive(media.fps),
    audioCodec: codecName(AUDIO_CODECS, media.audioCodecId),
  };
}

function codecName(names: Record<string, string>, id: number | undefined): string {
  if (id === undefined) return "none";
  // Enhanced RTMP carries a FourCC as a 32-bit number; FLV's own ids are below 16.
  const key =
    id > 0xff
      ? Buffer.from([id >>> 24, (id >>> 16) & 0xff, (id >>> 8) & 0xff, id & 0xff]).toString("latin1")
      : String(id);
  return names[key] ?? "unknown";
}

function whole(value: number | undefined): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}

function positive(value: number | undefined): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}
