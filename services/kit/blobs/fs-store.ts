import { randomUUID } from "node:crypto";
import { mkdir, open, readdir, rename, rm, stat, type FileHandle } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Readable } from "node:stream";
import {
  BlobMissingError,
  BlobUnavailableError,
  checkedKey,
  prefixed,
  type BlobStore,
  type ByteRange,
} from "./store.js";

/**
 * Blobs as files under one directory (the default: `<data dir>/blobs`). A put
 * writes a temporary file under `.tmp/`, syncs it, then renames it into place,
 * so a reader never sees part of an object and a failed put leaves nothing; a
 * put cut off by a crash leaves its temporary file, for `sweepUnfinished`.
 */
export class FsBlobStore implements BlobStore {
  readonly kind = "fs";

  constructor(private readonly root: string) {}

  async put(key: string, body: AsyncIterable<Uint8Array>): Promise<void> {
    const path = this.pathOf(key);
    const temporary = join(this.root, ".tmp", randomUUID());
    let file: FileHandle | undefined;
    try {
      await mkdir(dirname(temporary), { recursive: true }).catch(unavailable("make its directory"));
      file = await open(temporary, "wx").catch(unavailable("open a file"));
      await writeAll(file, body);
      await file.sync().catch(unavailable("sync"));
      await file.close();
      file = undefined;
      await mkdir(dirname(path), { recursive: true }).catch(unavailable("make its directory"));
      await rename(temporary, path).catch(unavailable("rename"));
    } catch (error) {
      await file?.close().catch(() => undefined);
      await rm(temporary, { force: true }).catch(() => undefined);
      throw error;
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const file = await open(this.pathOf(key), "r").catch((error: NodeJS.ErrnoException) => {
      throw error.code === "ENOENT" ? new BlobMissingError(key) : new BlobUnavailableError("read", error);
    });
    return file.createReadStream({ start: range?.start, end: range?.end, autoClose: true });
  }

  async has(key: string): Promise<boolean> {
    return stat(this.pathOf(key)).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return false;
        throw new BlobUnavailableError("read", error);
      },
    );
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(key), { force: true }).catch(unavailable("delete"));
  }

  /** Removes temporary files last written before `olderThan` (another instance sharing the directory may write some). */
  async sweepUnfinished(olderThan: Date): Promise<void> {
    const directory = join(this.root, ".tmp");
    const names = await readdir(directory).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return [];
      throw new BlobUnavailableError("list temporary files", error);
    });
    for (const name of names) {
      const path = join(directory, name);
      const written = await stat(path).then(
        (found) => found.mtime,
        () => undefined,
      );
      if (written && written < olderThan) await rm(path, { force: true }).catch(unavailable("delete"));
    }
  }

  scoped(prefix: string): BlobStore {
    return prefixed(this, prefix);
  }

  private pathOf(key: string): string {
    return join(this.root, ...checkedKey(key).split("/"));
  }
}

/** Bytes waiting behind a write under way before the body is read further (a WriteStream's highWaterMark, say). */
const QUEUED_BYTES = 1024 * 1024;

/**
 * Writes `body` to `file` as it arrives, reading on while a write is under way: what arrives meanwhile goes in the
 * next write together (one writev, as a WriteStream does), rather than a write and a wait for it per chunk.
 */
async function writeAll(file: FileHandle, body: AsyncIterable<Uint8Array>): Promise<void> {
  let queue: Uint8Array[] = [];
  let queued = 0;
  let failed: BlobUnavailableError | undefined;
  // Set while chunks wait or are written; cleared in the step that finds the queue empty, so none is left behind.
  let writing: Promise<void> | undefined;
  const drain = async () => {
    try {
      while (queue.length > 0) {
        const [buffers, bytes] = [queue, queued];
        [queue, queued] = [[], 0];
        const { bytesWritten } = await file.writev(buffers);
        if (bytesWritten !== bytes) throw new Error(`${bytesWritten} of ${bytes} bytes written`);
      }
    } catch (error) {
      failed = new BlobUnavailableError("write", error);
    }
    writing = undefined;
  };
  try {
    for await (const chunk of body) {
      if (failed) break;
      queue.push(chunk);
      queued += chunk.byteLength;
      writing ??= drain();
      if (queued >= QUEUED_BYTES) await writing;
    }
  } finally {
    // The file is never closed under a write; the body's own error, if any, goes on as it is.
    await writing;
  }
  if (failed) throw failed;
}

function unavailable(what: string) {
  return (error: unknown): never => {
    throw new BlobUnavailableError(what, error);
  };
}
