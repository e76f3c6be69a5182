/**
 * One upload as the handler hands it over. An archive is a tar or a tar.gz: gzip is recognised by its magic bytes,
 * whatever type the client declared. Loose files are multipart parts: each part's name is its path, and its declared
 * type is not trusted (the stored type comes from the extension's allowlist).
 */
export type UploadSource =
  | { kind: "archive"; body: AsyncIterable<Uint8Array> }
  | { kind: "files"; files: AsyncIterable<{ name: string; contentType: string; body: AsyncIterable<Uint8Array> }> };

/** The project's caps for this upload; `storageLeft` is its storage quota less what it already uses. */
export interface UploadLimits {
  deployFiles: number;
  deployBytes: number;
  fileBytes: number;
  storageLeft: number;
}

/**
 * One accepted file: its normalised path (NFC, no leading `/`, case kept), its content type from the allowlist,
 * whether precompressing it pays, and its whole bytes (<= fileBytes) with their sha256 (lowercase hex).
 */
export interface EntryFile {
  path: string;
  contentType: string;
  compressible: boolean;
  bytes: Uint8Array;
  sha256: string;
}

/** The checklist rule an upload broke. */
export type Rule =
  "traversal" | "link" | "special" | "hidden" | "server_code" | "file_type" | "duplicate" | "quota" | "archive";

/**
 * The first fault of an upload. `path` is the entry as the upload named it, made printable (control characters
 * escaped, cut at 1024 characters); empty when the fault is the archive's own (not a tar, truncated, no files).
 */
export class UploadRefused extends Error {
  constructor(
    readonly path: string,
    readonly rule: Rule,
    message: string,
  ) {
    super(message);
    this.name = "UploadRefused";
  }
}

/** One line of a deploy's upload log. */
export interface LogLine {
  level: "info" | "error";
  path: string;
  rule: Rule | "";
  message: string;
}

/** What the validator reads, from a tar or from multipart parts: `body` only for a file. */
export interface UploadEntry {
  name: string;
  kind: "file" | "directory" | "link" | "special";
  /** The tar type, for the refusal's message (`symlink`, `fifo`, …). */
  type: string;
  /** Declared up front by a tar header; a multipart part's size is known only as it streams. */
  size?: number;
  body?: AsyncIterable<Uint8Array>;
}
