import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { type FileReadResultSchema, type MediaService } from "../../../gen/pf/media/v1/media_pb.js";
import { BlobMissingError, BlobUnavailableError } from "../../kit/blobs/store.js";
import { problem } from "../../kit/handler/problem.js";
import type { MediaContext } from "../context.js";
import { fileByKey, fileToProto } from "../db/files.js";
import type { FileRow } from "../db/entities.js";
import { answerBytes } from "../../kit/blobs/labels.js";
import { storeUnavailable } from "./uploads.js";

type ReadHandlers = Pick<ServiceImpl<typeof MediaService>, "readFile" | "serveFile">;
type ReadResult = MessageInitShape<typeof FileReadResultSchema>;

/** A year: keys are never reused and objects never change, so their bytes are cached for good. */
const IMMUTABLE = "public, max-age=31536000, immutable";

export function readHandlers(ctx: MediaContext): ReadHandlers {
  // The contract holds key and app to their shapes before any query.
  const found = async (key: string, app?: string) => {
    const row = await fileByKey(ctx.orm.em.fork(), key);
    // Another namespace's object answers as a missing one.
    if (!row || (app !== undefined && row.app !== app))
      throw problem(404, "media.file.not_found", `No file ${key}${app === undefined ? "" : ` in ${app}`}.`);
    return row;
  };
  return {
    async *readFile(request, call) {
      const row = await found(request.key, request.app);
      if (!request.download) {
        yield { file: fileToProto(row) };
        return;
      }
      yield* bytesOf(ctx, row, call);
    },
    async *serveFile(request, call) {
      yield* bytesOf(ctx, await found(request.key), call);
    },
  };
}

/**
 * An object's bytes, streamed from the blob store: ETag from its digest (304
 * for If-None-Match), one Range (206, or 416), immutable caching, a sandboxing
 * CSP, and a disposition that keeps HTML, SVG and XML from running.
 */
async function* bytesOf(ctx: MediaContext, row: FileRow, call: HandlerContext): AsyncGenerator<ReadResult> {
  const file = fileToProto(row);
  const size = Number(row.size);
  const answered = answerBytes(
    call,
    { sha256: row.sha256, name: row.name, contentType: row.contentType, size, cacheControl: IMMUTABLE },
    () => problem(416, "media.range_unsatisfiable", `The range is outside the file's ${size} bytes.`, { size }),
  );
  if (answered === undefined) {
    yield { file, body: { contentType: row.contentType } };
    return;
  }
  const part = answered === "whole" ? undefined : answered;
  const bytes = await ctx.blobs.get(row.key, part).catch((error: unknown) => {
    if (error instanceof BlobUnavailableError) throw storeUnavailable(ctx, error);
    if (error instanceof BlobMissingError) {
      ctx.logger.error({ key: row.key }, "a file's blob is missing");
      throw problem(503, "media.store_unavailable", "The file's bytes cannot be read now.");
    }
    throw error;
  });
  try {
    let first = true;
    for await (const data of bytes as AsyncIterable<Buffer>) {
      yield first ? { file, body: { contentType: row.contentType, data } } : { body: { data } };
      first = false;
    }
    if (first) yield { file, body: { contentType: row.contentType } };
  } finally {
    bytes.destroy();
  }
}
