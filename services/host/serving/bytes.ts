import type { ServerResponse } from "node:http";
import { pipeline } from "node:stream";
import type { BlobStore, ByteRange } from "../../kit/blobs/store.js";
import type { Logger } from "../../kit/runtime/logger.js";
import { ByteLru } from "../../kit/runtime/byte-lru.js";
import type { Variant } from "./manifest.js";

/** Files up to this size are kept in memory once read: most of a site's requests, answered without opening a file. */
const SMALL_FILE_BYTES = 128 * 1024;
/** The memory they may take, by least recent use. A blob never changes under its digest: nothing to invalidate. */
const SMALL_FILES_BYTES = 64 * 1024 * 1024;

/** A file's bytes out of the blob store (by digest), small ones from memory, the rest streamed. */
export class FileBytes {
  private readonly small = new ByteLru<Uint8Array>(SMALL_FILES_BYTES);

  constructor(
    private readonly blobs: BlobStore,
    private readonly logger: Logger,
  ) {}

  /**
   * Answers with `status` and `headers`, then the variant's bytes (or a range of them). The blob is opened before the
   * head is written: a missing or unreadable blob throws, for an error answer.
   */
  async send(
    res: ServerResponse,
    status: number,
    headers: readonly string[],
    variant: Variant,
    range?: ByteRange,
  ): Promise<void> {
    if (variant.size <= SMALL_FILE_BYTES) {
      let bytes = this.small.get(variant.digest);
      if (bytes === undefined) this.small.set(variant.digest, (bytes = await this.whole(variant.digest)));
      res.writeHead(status, headers as string[]);
      res.end(range ? bytes.subarray(range.start, range.end + 1) : bytes);
      return;
    }
    const stream = await this.blobs.get(variant.digest, range);
    res.writeHead(status, headers as string[]);
    pipeline(stream, res, (error) => {
      // A client gone mid-file is no failure of ours.
      if (error && (error as NodeJS.ErrnoException).code !== "ERR_STREAM_PREMATURE_CLOSE")
        this.logger.warn({ err: error, digest: variant.digest }, "a site's file stopped streaming");
    });
  }

  private async whole(digest: string): Promise<Uint8Array> {
    const chunks: Buffer[] = [];
    for await (const chunk of await this.blobs.get(digest)) chunks.push(chunk as Buffer);
    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  }
}
