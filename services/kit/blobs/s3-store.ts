import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
  type CompletedPart,
} from "@aws-sdk/client-s3";
import type { Readable } from "node:stream";
import {
  BlobMissingError,
  BlobUnavailableError,
  checkedKey,
  prefixed,
  type BlobStore,
  type ByteRange,
} from "./store.js";

export interface S3Settings {
  /** The S3-compatible endpoint (MinIO, R2, Garage…); unset: AWS's own for the region. */
  endpoint?: string;
  bucket: string;
  region: string;
  /** Unset: the SDK's default credential chain (environment, profile, instance role). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Bytes of each part of a multipart upload (S3's minimum is 5 MiB), and so the most held in memory per upload. */
  partBytes: number;
}

/**
 * Blobs as objects of one bucket, path-style, for any S3-compatible store. A
 * body smaller than one part is one PutObject; a larger one a multipart
 * upload, part by part (one part in memory at a time), completed only when the
 * body ended well and aborted otherwise, so a failed put leaves no object.
 */
export class S3BlobStore implements BlobStore {
  readonly kind = "s3";
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly partBytes: number;

  constructor(settings: S3Settings) {
    this.bucket = settings.bucket;
    this.partBytes = settings.partBytes;
    this.client = new S3Client({
      region: settings.region,
      endpoint: settings.endpoint,
      forcePathStyle: true,
      credentials:
        settings.accessKeyId && settings.secretAccessKey
          ? { accessKeyId: settings.accessKeyId, secretAccessKey: settings.secretAccessKey }
          : undefined,
      // Checksums only where S3 requires them: stores that are not AWS (MinIO, R2, s3rver) differ in the rest.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
      maxAttempts: 2,
    });
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, contentType: string): Promise<void> {
    const Key = checkedKey(key);
    const Bucket = this.bucket;
    const parts = partsOf(body, this.partBytes);
    const first = await parts.next();
    const second = first.done ? first : await parts.next();
    if (second.done) {
      const Body = first.done ? Buffer.alloc(0) : first.value;
      await this.send("write", () =>
        this.client.send(new PutObjectCommand({ Bucket, Key, Body, ContentType: contentType })),
      );
      return;
    }
    const { UploadId } = await this.send("write", () =>
      this.client.send(new CreateMultipartUploadCommand({ Bucket, Key, ContentType: contentType })),
    );
    const done: CompletedPart[] = [];
    try {
      const upload = async (Body: Buffer) => {
        const PartNumber = done.length + 1;
        const { ETag } = await this.send("write", () =>
          this.client.send(new UploadPartCommand({ Bucket, Key, UploadId, PartNumber, Body })),
        );
        done.push({ ETag, PartNumber });
      };
      await upload(first.value as Buffer);
      await upload(second.value);
      for (let next = await parts.next(); !next.done; next = await parts.next()) await upload(next.value);
      await this.send("write", () =>
        this.client.send(
          new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: done } }),
        ),
      );
    } catch (error) {
      // Best effort: a store that is gone keeps the parts until its own expiry of incomplete uploads; no object exists.
      await this.client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId })).catch(() => undefined);
      throw error;
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const Range = range && `bytes=${range.start}-${range.end}`;
    const answer = await this.send(
      "read",
      () => this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: checkedKey(key), Range })),
      key,
    );
    return answer.Body as Readable;
  }

  async has(key: string): Promise<boolean> {
    const head = () => this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: checkedKey(key) }));
    return this.send("read", head, key).then(
      () => true,
      (error: unknown) => {
        if (error instanceof BlobMissingError) return false;
        throw error;
      },
    );
  }

  async delete(key: string): Promise<void> {
    await this.send("delete", () =>
      this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: checkedKey(key) })),
    );
  }

  /**
   * Nothing to do here: a put leaves no object until it completes, and the parts of a multipart upload cut off by a
   * crash are the bucket's to expire (its AbortIncompleteMultipartUpload lifecycle rule: services/kit/README.md).
   */
  async sweepUnfinished(): Promise<void> {}

  scoped(prefix: string): BlobStore {
    return prefixed(this, prefix);
  }

  /** Sends a command; a missing object is `BlobMissingError`, any other failure `BlobUnavailableError`. */
  private async send<T>(what: string, command: () => Promise<T>, key?: string): Promise<T> {
    try {
      return await command();
    } catch (error) {
      const name = (error as { name?: string }).name;
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (key !== undefined && (name === "NoSuchKey" || name === "NotFound" || status === 404))
        throw new BlobMissingError(key);
      throw new BlobUnavailableError(what, error);
    }
  }
}

/** The body cut into parts of `size` bytes (the last may be shorter); an empty body yields none. */
async function* partsOf(body: AsyncIterable<Uint8Array>, size: number): AsyncGenerator<Buffer, void> {
  let held: Buffer[] = [];
  let length = 0;
  for await (const chunk of body) {
    let rest = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    while (length + rest.length >= size) {
      const take = size - length;
      held.push(rest.subarray(0, take));
      yield Buffer.concat(held);
      held = [];
      length = 0;
      rest = rest.subarray(take);
    }
    if (rest.length > 0) {
      // Copied: the chunk's buffer may be reused by its producer once handed over.
      held.push(Buffer.from(rest));
      length += rest.length;
    }
  }
  if (length > 0) yield Buffer.concat(held);
}
