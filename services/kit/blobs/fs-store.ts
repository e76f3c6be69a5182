import { randomUUID } from "node:crypto";
import { mkdir, open, readdir, rename, rm, stat } from "node:fs/promises";
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
    let file: Awaited<ReturnType<typeof open>> | undefined;
    try {
      await mkdir(dirname(temporary), { recursive: true }).catch(unavailable("make its directory"));
      file = await open(temporary, "wx").catch(unavailable("open a file"));
      for await (const chunk of body) await file.write(chunk).catch(unavailable("write"));
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

function unavailable(what: string) {
  return (error: unknown): never => {
    throw new BlobUnavailableError(what, error);
  };
}
