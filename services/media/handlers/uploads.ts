import type { ServiceImpl } from "@connectrpc/connect";
import { randomBytes } from "node:crypto";
import type { FileUpload, MediaService } from "../../../gen/pf/media/v1/media_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import { measured, TooLargeError, type Measured } from "../../kit/blobs/measure.js";
import { BlobUnavailableError } from "../../kit/blobs/store.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { MediaContext } from "../context.js";
import { fileToProto, insertFile } from "../db/files.js";
import { checkedApp, checkedContentType, checkedName, keyFrom } from "../domain/files.js";
import { objectCreated } from "../events.js";

type UploadHandlers = Pick<ServiceImpl<typeof MediaService>, "uploadFile">;

export function uploadHandlers(ctx: MediaContext): UploadHandlers {
  return {
    /**
     * The first message names the file; its bytes go to the blob store as they
     * arrive, counted and hashed on the way. The row is written only once every
     * byte is stored, so a failed upload leaves neither; a row that cannot be
     * written takes its blob with it.
     */
    async uploadFile(parts, call) {
      const messages = parts[Symbol.asyncIterator]();
      const head = await messages.next();
      if (head.done) throw invalid("app", "The upload holds no message: the first names app, name and content_type.");
      const app = checkedApp(head.value.app);
      const principal = principalOf(call);
      // An app writes only its own namespace; services write any (for the people and apps they serve).
      if (principal.kind === "app" && principal.appId !== app)
        throw problem(403, "media.namespace_refused", `An app writes only its own namespace, not ${app}.`);
      const name = checkedName(head.value.name);
      const contentType = checkedContentType(head.value.contentType);
      const key = keyFrom(randomBytes(18));
      const stored: Measured = { size: 0, sha256: "" };
      try {
        await ctx.blobs.put(key, measured(chunksOf(head.value, messages), ctx.settings.maxBytes, stored), contentType);
      } catch (error) {
        if (error instanceof TooLargeError)
          throw problem(413, "media.too_large", `The file is larger than the limit of ${error.limit} bytes.`, {
            limit: error.limit,
          });
        if (error instanceof BlobUnavailableError) throw storeUnavailable(ctx, error);
        throw error;
      }
      try {
        return await ctx.transaction(async (em) => {
          const row = insertFile(em, {
            key,
            app,
            name,
            contentType,
            size: stored.size,
            sha256: stored.sha256,
            uploader: principal.sub,
            createdAt: ctx.clock.now(),
          });
          await em.flush();
          const file = fileToProto(row);
          await objectCreated(em, file);
          return file;
        });
      } catch (error) {
        await ctx.blobs.delete(key).catch((cause: unknown) => {
          ctx.logger.error({ err: cause, key }, "a blob whose row was not written stays behind");
        });
        throw error;
      }
    },
  };
}

/** The file's bytes: the first message's, then each following message's; those name nothing else. */
async function* chunksOf(head: FileUpload, rest: AsyncIterator<FileUpload>): AsyncGenerator<Uint8Array> {
  if (head.chunk.length > 0) yield head.chunk;
  for (let next = await rest.next(); !next.done; next = await rest.next()) {
    const { app, name, contentType, chunk } = next.value;
    const named = app ? "app" : name ? "name" : contentType ? "content_type" : undefined;
    if (named) throw invalid(named, `Field ${named} is set on the first message only; the following carry chunks.`);
    if (chunk.length > 0) yield chunk;
  }
}

/** 503 for a blob store that failed: nothing was stored; the cause is logged, never answered. */
export function storeUnavailable(ctx: MediaContext, error: BlobUnavailableError) {
  ctx.logger.error({ err: error }, "the blob store failed");
  return problem(503, "media.store_unavailable", "The file store is unavailable; nothing was stored. Try again later.");
}
