import { ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import S3rver from "s3rver";

export const BUCKET = "pf-test";
const CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

/** A real S3-protocol server (s3rver) on loopback, with one bucket, its files in a temporary folder. */
export class TestS3 {
  private server?: S3rver;
  private directory?: string;

  constructor(readonly port: number) {}

  async start(): Promise<void> {
    this.directory = await mkdtemp(join(tmpdir(), "pf-s3-"));
    this.server = new S3rver({
      address: "127.0.0.1",
      port: this.port,
      silent: true,
      directory: this.directory,
      configureBuckets: [{ name: BUCKET }],
    });
    await this.server.run();
  }

  async stop(): Promise<void> {
    await this.server?.close();
    if (this.directory) await rm(this.directory, { recursive: true, force: true });
  }

  /** The platform's settings for a store at `port` (this server's, or a proxy's in front of it). */
  env(port = this.port): Record<string, string> {
    return {
      PF_BLOB_STORE: "s3",
      PF_S3_ENDPOINT: `http://127.0.0.1:${port}`,
      PF_S3_BUCKET: BUCKET,
      PF_S3_REGION: "us-east-1",
      PF_S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      PF_S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
      PF_S3_PART_BYTES: String(5 * 1024 * 1024),
    };
  }

  /** Every object key in the bucket. */
  async keys(): Promise<string[]> {
    const client = new S3Client({
      endpoint: `http://127.0.0.1:${this.port}`,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: CREDENTIALS,
    });
    const listed = await client.send(new ListObjectsV2Command({ Bucket: BUCKET }));
    client.destroy();
    return (listed.Contents ?? []).map((object) => object.Key!);
  }
}
