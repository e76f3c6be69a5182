import type { S3Client } from "@aws-sdk/client-s3";
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

/** The AWS SDK, imported at an S3 store's first command: a process on the file store never loads it (~5 MB of heap). */
const importSdk = () => Promise.all([import("@aws-sdk/client-s3"), import("@aws-sdk/lib-storage")]);
let sdk: ReturnType<typeof importSdk> | undefined;
type Sdk = Awaited<ReturnType<typeof importSdk>>;

/**
 * Blobs as objects of one bucket, path-style, for any S3-compatible store.
 * Puts go through `@aws-sdk/lib-storage`'s Upload: a body smaller than one
 * part is one PutObject; a larger one a multipart upload, one part at a time
 * (queue size 1: one part in memory), completed only when the body ended well
 * and aborted otherwise, so a failed put leaves no object.
 */
export class S3BlobStore implements BlobStore {
  readonly kind = "s3";
  private client?: Promise<[S3Client, Sdk]>;
  private readonly bucket: string;
  private readonly partBytes: number;

  constructor(private readonly settings: S3Settings) {
    this.bucket = settings.bucket;
    this.partBytes = settings.partBytes;
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, contentType: string): Promise<void> {
    const Key = checkedKey(key);
    let bodyFailure: { error: unknown } | undefined;
    async function* copied() {
      try {
        // Copied: the chunk's buffer may be reused by its producer once handed over, and a part holds it until sent.
        for await (const chunk of body) yield Buffer.from(chunk);
      } catch (error) {
        bodyFailure = { error };
        throw error;
      }
    }
    const [client, [, { Upload }]] = await this.connected();
    // A web stream: it reads nothing ahead, and cancelling it returns the body rather than throwing into it.
    const Body = ReadableStream.from(copied());
    const upload = new Upload({
      client,
      params: { Bucket: this.bucket, Key, Body, ContentType: contentType },
      partSize: this.partBytes,
      queueSize: 1,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (error) {
      // The body's own error as it is (a cap, a client gone); anything else is the store's.
      if (bodyFailure) throw bodyFailure.error;
      throw new BlobUnavailableError("write", error);
    } finally {
      // lib-storage stops reading at a failure without cancelling: the body is given back (not awaited: a stalled
      // body's pending read must not hold the answer).
      Body.cancel().catch(() => undefined);
    }
  }

  async get(key: string, range?: ByteRange): Promise<Readable> {
    const Range = range && `bytes=${range.start}-${range.end}`;
    const answer = await this.send(
      "read",
      (client, [{ GetObjectCommand }]) =>
        client.send(new GetObjectCommand({ Bucket: this.bucket, Key: checkedKey(key), Range })),
      key,
    );
    return answer.Body as Readable;
  }

  async has(key: string): Promise<boolean> {
    const head = (client: S3Client, [{ HeadObjectCommand }]: Sdk) =>
      client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: checkedKey(key) }));
    return this.send("read", head, key).then(
      () => true,
      (error: unknown) => {
        if (error instanceof BlobMissingError) return false;
        throw error;
      },
    );
  }

  async delete(key: string): Promise<void> {
    await this.send("delete", (client, [{ DeleteObjectCommand }]) =>
      client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: checkedKey(key) })),
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

  /** The SDK's client, made at the first command, with the SDK. */
  private connected(): Promise<[S3Client, Sdk]> {
    const { region, endpoint, accessKeyId, secretAccessKey } = this.settings;
    return (this.client ??= (sdk ??= importSdk()).then((loaded) => {
      const client = new loaded[0].S3Client({
        region,
        endpoint,
        forcePathStyle: true,
        credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : undefined,
        // Checksums only where S3 requires them: stores that are not AWS (MinIO, R2, s3rver) differ in the rest.
        requestChecksumCalculation: "WHEN_REQUIRED",
        responseChecksumValidation: "WHEN_REQUIRED",
        maxAttempts: 2,
      });
      return [client, loaded];
    }));
  }

  /** Sends a command; a missing object is `BlobMissingError`, any other failure `BlobUnavailableError`. */
  private async send<T>(what: string, command: (client: S3Client, sdk: Sdk) => Promise<T>, key?: string): Promise<T> {
    try {
      return await command(...(await this.connected()));
    } catch (error) {
      const name = (error as { name?: string }).name;
      const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (key !== undefined && (name === "NoSuchKey" || name === "NotFound" || status === 404))
        throw new BlobMissingError(key);
      throw new BlobUnavailableError(what, error);
    }
  }
}
