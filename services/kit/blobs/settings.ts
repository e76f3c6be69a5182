import { join } from "node:path";
import type { Config } from "../runtime/config.js";
import { wholeSetting } from "../runtime/whole-setting.js";
import { FsBlobStore } from "./fs-store.js";
import { S3BlobStore } from "./s3-store.js";
import type { BlobStore } from "./store.js";

const MIB = 1024 * 1024;

/**
 * The process's blob store, from its settings (services/kit/README.md, "Blob store"):
 * `PF_BLOB_STORE=fs` (the default) keeps blobs under `PF_BLOB_DIR` (default
 * `<PF_DATA_DIR>/blobs`); `s3` in the bucket `PF_S3_BUCKET` of `PF_S3_ENDPOINT`.
 */
export function openBlobStore(config: Config): BlobStore {
  const env = config.env;
  const kind = env.PF_BLOB_STORE || "fs";
  if (kind === "fs") return new FsBlobStore(env.PF_BLOB_DIR || join(config.dataDir, "blobs"));
  if (kind !== "s3") throw new Error(`PF_BLOB_STORE: expected fs or s3, got ${JSON.stringify(kind)}`);
  const bucket = env.PF_S3_BUCKET;
  if (!bucket) throw new Error("PF_BLOB_STORE=s3 needs PF_S3_BUCKET");
  if (Boolean(env.PF_S3_ACCESS_KEY_ID) !== Boolean(env.PF_S3_SECRET_ACCESS_KEY))
    throw new Error("PF_S3_ACCESS_KEY_ID and PF_S3_SECRET_ACCESS_KEY are set together or not at all");
  return new S3BlobStore({
    endpoint: env.PF_S3_ENDPOINT || undefined,
    bucket,
    region: env.PF_S3_REGION || "us-east-1",
    accessKeyId: env.PF_S3_ACCESS_KEY_ID || undefined,
    secretAccessKey: env.PF_S3_SECRET_ACCESS_KEY || undefined,
    partBytes: wholeSetting(env, "PF_S3_PART_BYTES", 8 * MIB, 5 * MIB),
  });
}
