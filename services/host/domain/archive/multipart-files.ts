import type { UploadEntry, UploadSource } from "./types.js";

type Parts = Extract<UploadSource, { kind: "files" }>["files"];

/** Multipart parts as entries: each part's name is its path, checked as a tar entry's name is. */
export async function* partEntries(files: Parts): AsyncGenerator<UploadEntry> {
  for await (const part of files) yield { name: part.name, kind: "file", type: "file", body: part.body };
}
