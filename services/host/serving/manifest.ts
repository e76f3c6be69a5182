import { HotRead, type ReadContext } from "../../kit/db/reads.js";

/** One representation of a file: its bytes' blob (digest, size), strong ETag and coding ("" for the file itself). */
export interface Variant {
  digest: string;
  size: number;
  etag: string;
  coding: "" | "br" | "gzip";
  /** The headers of its whole 200 answer, built once (writeHead takes them flat). */
  headers: readonly string[];
}

/** A file of a deploy as served: its headers' parts and its representations. */
export interface ServedFile {
  contentType: string;
  cacheControl: string;
  /** Vary: Accept-Encoding, when it has precompressed copies. */
  varies: boolean;
  identity: Variant;
  br?: Variant;
  gzip?: Variant;
}

/** A deploy's manifest: site path (no leading slash, NFC) → file. Deploys are immutable, so is this. */
export type Manifest = ReadonlyMap<string, ServedFile>;

interface FileRow {
  path: string;
  digest: string;
  size: string | number;
  contentType: string;
  encodings: Record<string, { digest: string; size: number }> | null;
}

const filesOfDeploy = new HotRead<FileRow, [string]>(
  "serving.deploy_files",
  `select path, digest, size, content_type as "contentType", encodings from {deploy_files} where deploy_id = $1`,
);

/** A deploy's manifest, read from PostgreSQL. */
export async function readManifest(ctx: ReadContext, deployId: string): Promise<Manifest> {
  const manifest = new Map<string, ServedFile>();
  for (const row of await filesOfDeploy.run(ctx, deployId)) manifest.set(row.path, servedFile(row));
  return manifest;
}

/** A file name carrying a content hash: a segment of 8+ hex digits between dots, dashes or underscores (app.3f9a1c2b.js). */
const HASHED = /(?:^|[._-])[0-9a-f]{8,}[._-]/i;

/** HTML is revalidated on every use; a hashed name never changes its bytes; the rest is kept five minutes. */
export function cacheControlOf(path: string, contentType: string): string {
  if (contentType.startsWith("text/html")) return "no-cache";
  if (HASHED.test(path.slice(path.lastIndexOf("/") + 1))) return "public, max-age=31536000, immutable";
  return "public, max-age=300, must-revalidate";
}

function servedFile(row: FileRow): ServedFile {
  const cacheControl = cacheControlOf(row.path, row.contentType);
  const encodings = row.encodings ?? {};
  const varies = encodings.br !== undefined || encodings.gzip !== undefined;
  const variant = (coding: Variant["coding"], digest: string, size: number): Variant => {
    const etag = `"${digest}"`;
    const headers = [
      "content-type",
      row.contentType,
      "content-length",
      String(size),
      "etag",
      etag,
      "cache-control",
      cacheControl,
      "accept-ranges",
      "bytes",
      "x-content-type-options",
      "nosniff",
    ];
    if (coding !== "") headers.push("content-encoding", coding);
    if (varies) headers.push("vary", "accept-encoding");
    return { digest, size, etag, coding, headers };
  };
  const coded = (coding: "br" | "gzip") => {
    const copy = encodings[coding];
    return copy && variant(coding, copy.digest, Number(copy.size));
  };
  return {
    contentType: row.contentType,
    cacheControl,
    varies,
    identity: variant("", row.digest, Number(row.size)),
    br: coded("br"),
    gzip: coded("gzip"),
  };
}
