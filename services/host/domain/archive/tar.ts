import { Readable, pipeline } from "node:stream";
import { createGunzip } from "node:zlib";
import { extract as tarExtract, type Extract, type Headers } from "tar-stream";
import { UploadRefused, type UploadEntry } from "./types.js";

/**
 * Bytes of a tar that are not file contents (headers, PAX and GNU long-name records, padding, the end blocks) may
 * be this much beyond 8 KiB per entry: a stream of zeros or one huge PAX record stops here, not at its end.
 */
const STRUCTURE_BYTES = 1024 * 1024;
const STRUCTURE_BYTES_PER_ENTRY = 8 * 1024;
/** Writes to the parser are cut to this, so what it holds beyond one entry stays small whatever the client sends. */
const SLICE_BYTES = 64 * 1024;

/**
 * The entries of a tar or tar.gz read as it streams: names as tar-stream gives them, after PAX `path` and GNU
 * long-name headers are applied. A parse or gunzip fault becomes the `archive` refusal; a fault of `body` itself (the
 * client gone) is thrown as it came.
 */
export async function* tarEntries(body: AsyncIterable<Uint8Array>): AsyncGenerator<UploadEntry> {
  let sourceError: { error: unknown } | undefined;
  const asArchiveFault = (error: unknown): unknown => {
    if (error instanceof UploadRefused) return error;
    if (sourceError !== undefined) return sourceError.error;
    const reason = error instanceof Error ? error.message : String(error);
    return new UploadRefused("", "archive", `not a tar or tar.gz archive, or a truncated one (${reason})`);
  };
  const source = (async function* () {
    try {
      yield* body;
    } catch (error) {
      sourceError = { error };
      throw error;
    }
  })();

  const extract = tarExtract();
  let raw = 0;
  let entries = 0;
  let declared = 0;
  extract.on("entry", (header: Headers) => {
    entries += 1;
    if (header.type === "file") declared += header.size ?? 0;
  });
  const count = (n: number) => {
    raw += n;
    if (raw - declared > STRUCTURE_BYTES + STRUCTURE_BYTES_PER_ENTRY * entries)
      throw new UploadRefused("", "quota", "the archive holds too many bytes outside its files (a compression bomb?)");
  };
  void pump(decompressed(source), extract, count).catch((error: unknown) =>
    extract.destroy(asArchiveFault(error) as Error),
  );

  try {
    for await (const entry of extract) yield toUploadEntry(entry.header, entry, asArchiveFault);
  } catch (error) {
    throw asArchiveFault(error);
  } finally {
    extract.destroy();
  }
}

function toUploadEntry(
  header: Headers,
  stream: AsyncIterable<Uint8Array>,
  asArchiveFault: (error: unknown) => unknown,
): UploadEntry {
  const type = header.type ?? "unknown";
  switch (type) {
    case "file":
      return { name: header.name, kind: "file", type, size: header.size ?? 0, body: guarded(stream, asArchiveFault) };
    case "directory":
      return { name: header.name, kind: "directory", type };
    case "link":
    case "symlink":
      return { name: header.name, kind: "link", type: `${type} to ${header.linkname ?? ""}` };
    default:
      return { name: header.name, kind: "special", type };
  }
}

async function* guarded(stream: AsyncIterable<Uint8Array>, asArchiveFault: (error: unknown) => unknown) {
  try {
    yield* stream;
  } catch (error) {
    throw asArchiveFault(error);
  }
}

/** Feeds the parser with backpressure, counting every decompressed byte; stops when the parser is gone. */
async function pump(chunks: AsyncIterable<Uint8Array>, extract: Extract, count: (n: number) => void): Promise<void> {
  let closed = false;
  extract.once("close", () => (closed = true));
  const drained = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        extract.off("drain", done);
        extract.off("close", done);
        resolve();
      };
      extract.on("drain", done);
      extract.on("close", done);
    });
  for await (const chunk of chunks) {
    for (let at = 0; at < chunk.byteLength && !closed; at += SLICE_BYTES) {
      const slice = chunk.subarray(at, at + SLICE_BYTES);
      count(slice.byteLength);
      if (!extract.write(slice)) await drained();
    }
    if (closed) return;
  }
  extract.end();
}

/** The body, gunzipped when it starts with gzip's magic bytes. */
async function* decompressed(body: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  const iterator = body[Symbol.asyncIterator]();
  try {
    const head: Uint8Array[] = [];
    let length = 0;
    while (length < 2) {
      const next = await iterator.next();
      if (next.done === true) break;
      head.push(next.value);
      length += next.value.byteLength;
    }
    const start = Buffer.concat(head);
    const all = (async function* () {
      if (start.byteLength > 0) yield start;
      for (let next = await iterator.next(); next.done !== true; next = await iterator.next()) yield next.value;
    })();
    if (start[0] !== 0x1f || start[1] !== 0x8b) return yield* all;
    const gunzip = createGunzip();
    pipeline(Readable.from(all), gunzip, () => undefined);
    yield* gunzip;
  } finally {
    await iterator.return?.();
  }
}
