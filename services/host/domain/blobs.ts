import { createHash } from "node:crypto";
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import type { HostContext } from "../context.js";
import { recordBlob } from "../db/blobs.js";
import type { ManifestFile } from "../db/deploys.js";
import type { EntryFile } from "./archive/index.js";

const brotli = promisify(brotliCompress);
const gzipped = promisify(gzip);

/** Blobs are shared by every file and site with the same bytes, whatever their type. */
const BLOB_TYPE = "application/octet-stream";

/**
 * The blob store's side of uploads: each file's bytes under their digest, and of compressible types a `br` and a
 * `gzip` copy where that saves bytes, each a blob of its own. Files with equal bytes are compressed once per upload.
 */
export class BlobKeeper {
  private readonly encoded = new Map<string, Promise<ManifestFile["encodings"]>>();

  constructor(private readonly ctx: HostContext) {}

  /** Stores the file (and its encodings) and answers its manifest line. */
  async keep(file: EntryFile): Promise<ManifestFile> {
    await this.put(file.sha256, file.bytes);
    let encodings = this.encoded.get(file.sha256);
    if (!encodings) {
      encodings = file.compressible ? this.encode(file.bytes) : Promise.resolve({});
      this.encoded.set(file.sha256, encodings);
    }
    const { path, sha256: digest, bytes, contentType } = file;
    return { path, digest, size: bytes.byteLength, contentType, encodings: await encodings };
  }

  private async encode(bytes: Uint8Array): Promise<ManifestFile["encodings"]> {
    const encodings: ManifestFile["encodings"] = {};
    const [br, gz] = await Promise.all([
      brotli(bytes, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength },
      }),
      gzipped(bytes, { level: 9 }),
    ]);
    for (const [coding, copy] of [
      ["br", br],
      ["gzip", gz],
    ] as const) {
      if (copy.byteLength >= bytes.byteLength) continue;
      const digest = createHash("sha256").update(copy).digest("hex");
      await this.put(digest, copy);
      encodings[coding] = { digest, size: copy.byteLength };
    }
    return encodings;
  }

  /** Records the blob (own statement, before its bytes), then puts its bytes unless they are stored already. */
  private async put(digest: string, bytes: Uint8Array): Promise<void> {
    await recordBlob(this.ctx.orm.em.fork(), digest, bytes.byteLength, this.ctx.clock.now());
    if (await this.ctx.blobs.has(digest)) return;
    await this.ctx.blobs.put(digest, once(bytes), BLOB_TYPE);
  }
}

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}
