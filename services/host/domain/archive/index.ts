import { createHash } from "node:crypto";
import { fileType } from "./file-types.js";
import { partEntries } from "./multipart-files.js";
import { shownPath, sitePath } from "./paths.js";
import { UploadTally } from "./tally.js";
import { tarEntries } from "./tar.js";
import { UploadRefused, type EntryFile, type LogLine, type UploadLimits, type UploadSource } from "./types.js";

export { UploadRefused } from "./types.js";
export type { EntryFile, LogLine, Rule, UploadLimits, UploadSource } from "./types.js";

/**
 * Reads the upload as a stream, awaiting `accept` for each file in order (one file in memory at a time, never the
 * whole upload), and throws UploadRefused at the first fault, after one error line. Logs an info line per accepted
 * file. Faults of `accept` or of the source itself (the client gone) are thrown as they came. An upload with no
 * file is refused: there would be nothing to serve.
 */
export async function validateUpload(
  source: UploadSource,
  limits: UploadLimits,
  accept: (file: EntryFile) => Promise<void>,
  log: (line: LogLine) => void,
): Promise<{ files: number; bytes: number }> {
  const tally = new UploadTally(limits);
  try {
    const entries = source.kind === "archive" ? tarEntries(source.body) : partEntries(source.files);
    for await (const entry of entries) {
      const raw = entry.name;
      if (entry.kind === "link") throw new UploadRefused(shownPath(raw), "link", `a ${entry.type}: links are refused`);
      if (entry.kind === "special")
        throw new UploadRefused(shownPath(raw), "special", `a ${entry.type} entry: only files and folders are taken`);
      if (entry.kind === "directory") {
        tally.folder(raw, sitePath(raw, "directory"));
        continue;
      }
      const path = sitePath(raw, "file");
      const type = fileType(raw, path);
      tally.file(raw, path, entry.size);
      const hash = createHash("sha256");
      const chunks: Uint8Array[] = [];
      let size = 0;
      for await (const chunk of entry.body ?? []) {
        size += chunk.byteLength;
        tally.add(raw, size, chunk.byteLength);
        hash.update(chunk);
        chunks.push(chunk);
      }
      await accept({ path, ...type, bytes: Buffer.concat(chunks, size), sha256: hash.digest("hex") });
      log({ level: "info", path, rule: "", message: `accepted: ${type.contentType}, ${size} bytes` });
    }
    if (tally.files === 0) throw new UploadRefused("", "archive", "the upload holds no files");
    return { files: tally.files, bytes: tally.bytes };
  } catch (error) {
    if (error instanceof UploadRefused)
      log({ level: "error", path: error.path, rule: error.rule, message: error.message });
    throw error;
  }
}
