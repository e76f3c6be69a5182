import { shownPath } from "./paths.js";
import { UploadRefused } from "./types.js";

/** A file type a site may hold: its stored content type, and whether brotli and gzip copies pay. */
export interface FileType {
  contentType: string;
  compressible: boolean;
}

const TEXT = "; charset=utf-8";
const text = (type: string): FileType => ({ contentType: `${type}${TEXT}`, compressible: true });
const packed = (contentType: string): FileType => ({ contentType, compressible: false });
const compressible = (contentType: string): FileType => ({ contentType, compressible: true });

/** The allowlist, by extension: static web content only. */
const BY_EXTENSION = new Map<string, FileType>(
  Object.entries({
    html: text("text/html"),
    htm: text("text/html"),
    css: text("text/css"),
    js: text("text/javascript"),
    mjs: text("text/javascript"),
    txt: text("text/plain"),
    md: text("text/markdown"),
    csv: text("text/csv"),
    vtt: text("text/vtt"),
    json: compressible("application/json"),
    map: compressible("application/json"),
    webmanifest: compressible("application/manifest+json"),
    xml: compressible("application/xml"),
    svg: compressible("image/svg+xml"),
    wasm: compressible("application/wasm"),
    ico: compressible("image/x-icon"),
    bmp: compressible("image/bmp"),
    ttf: compressible("font/ttf"),
    otf: compressible("font/otf"),
    eot: compressible("application/vnd.ms-fontobject"),
    png: packed("image/png"),
    apng: packed("image/apng"),
    jpg: packed("image/jpeg"),
    jpeg: packed("image/jpeg"),
    gif: packed("image/gif"),
    webp: packed("image/webp"),
    avif: packed("image/avif"),
    woff: packed("font/woff"),
    woff2: packed("font/woff2"),
    pdf: packed("application/pdf"),
    mp3: packed("audio/mpeg"),
    m4a: packed("audio/mp4"),
    ogg: packed("audio/ogg"),
    opus: packed("audio/ogg"),
    flac: packed("audio/flac"),
    wav: packed("audio/wav"),
    mp4: packed("video/mp4"),
    ogv: packed("video/ogg"),
    webm: packed("video/webm"),
  }),
);

/** Apple's app-links file has no extension and must be served as JSON. */
const BY_NAME = new Map<string, FileType>([["apple-app-site-association", compressible("application/json")]]);

/** The type of a file at `path` (already a site path), or its refusal: off the allowlist. */
export function fileType(raw: string, path: string): FileType {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  const type = dot > 0 ? BY_EXTENSION.get(name.slice(dot + 1).toLowerCase()) : BY_NAME.get(name);
  if (type === undefined)
    throw new UploadRefused(shownPath(raw), "file_type", `${name} is not a type a static site may hold`);
  return type;
}
