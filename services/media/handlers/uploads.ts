import type { ServiceImpl } from "@connectrpc/connect";
import { randomBytes } from "node:crypto";
import type { File, FileUpload, MediaService } from "../../../gen/pf/media/v1/media_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import { Measure, TooLargeError, type Measured } from "../../kit/blobs/measure.js";
import { BlobUnavailableError } from "../../kit/blobs/store.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { StreamSlots } from "../../kit/rpc/stream-slots.js";
import type { MediaContext } from "../context.js";
import { fileToProto, insertFile, type StoredFile } from "../db/files.js";
import { checkedContentType, checkedName, keyFrom } from "../domain/files.js";
import { objectCreated } from "../events.js";
import { UploadReservation } from "../reservations.js";

type UploadHandlers = Pick<ServiceImpl<typeof MediaService>, "uploadFile">;

export function uploadHandlers(ctx: MediaContext): UploadHandlers {
  // Uploads open at once per caller, in this process (a slow upload holds a socket and a temporary file).
  const open = new StreamSlots();
  return {
    /**
     * The first message names the file; the upload is recorded and its file counted against the namespace's quota
     * before any byte is stored; its bytes go to the blob store as they arrive, reserved, counted and hashed on the
     * way. The row is written only once every byte is stored, so a failed upload leaves neither; a row that cannot
     * be written takes its blob with it.
     */
    async uploadFile(parts, call) {
      const messages = parts[Symbol.asyncIterator]();
      const head = await messages.next();
      // Only the first message names the namespace, so the contract holds app to its shape but cannot require it.
      if (head.done || head.value.app === "")
        throw invalid("app", "The upload's first message names app, name and content_type.");
      const { app } = head.value;
      const principal = principalOf(call);
      // An app writes only its own namespace; services write any (for the people and apps they serve).
      if (principal.kind === "app" && principal.appId !== app)
        throw problem(403, "media.namespace_refused", `An app writes only its own namespace, not ${app}.`);
      const name = checkedName(head.value.name);
      const contentType = checkedContentType(head.value.contentType);
      // Services upload for the many they serve: their uploads are not capped per caller.
      const limit = ctx.settings.openUploads;
      const release = open.take(
        principal.kind === "service" ? [] : [{ name: "media.upload.open", key: principal.sub, limit }],
      );
      try {
        const reservation = new UploadReservation(ctx, keyFrom(randomBytes(18)), app);
        await reservation.begin();
        const stored = await store(ctx, reservation, head.value, messages, contentType);
        return await record(ctx, reservation, { name, contentType, ...stored, uploader: principal.sub });
      } finally {
        release();
      }
    },
  };
}

/** Streams the file into the blob store under its reservation; a failure gives the reservation back. */
async function store(
  ctx: MediaContext,
  reservation: UploadReservation,
  head: FileUpload,
  rest: AsyncIterator<FileUpload>,
  contentType: string,
): Promise<Measured> {
  const measure = new Measure(ctx.settings.maxBytes);
  try {
    await ctx.blobs.put(reservation.key, chunksOf(head, rest, measure, reservation), contentType);
    return measure.result();
  } catch (error) {
    await reservation.release();
    if (error instanceof TooLargeError)
      throw problem(413, "media.too_large", `The file is larger than the limit of ${error.limit} bytes.`, {
        limit: error.limit,
      });
    if (error instanceof BlobUnavailableError) throw storeUnavailable(ctx, error);
    throw error;
  }
}

/** Writes the row and its event, settling the reservation; a row that cannot be written takes its blob with it. */
async function record(
  ctx: MediaContext,
  reservation: UploadReservation,
  file: Pick<StoredFile, "name" | "contentType" | "size" | "sha256" | "uploader">,
): Promise<File> {
  const { key, app } = reservation;
  try {
    return await ctx.transaction(async (em) => {
      const stored = { ...file, key, app, createdAt: ctx.clock.now() };
      await insertFile(em, stored);
      const created = fileToProto(stored);
      await objectCreated(em, created);
      // Last: settling locks the namespace's counters, which its other uploads wait on, until the commit.
      await reservation.settle(em, file.size);
      return created;
    });
  } catch (error) {
    await ctx.blobs.delete(key).catch((cause: unknown) => {
      ctx.logger.error({ err: cause, key }, "a blob whose row was not written stays behind");
    });
    await reservation.release();
    throw error;
  }
}

/**
 * The file's bytes: the first message's, then each following message's (those name nothing else), each measured
 * against the cap and reserved before it is passed on. One generator for all three: every layer more costs
 * promises per chunk.
 */
async function* chunksOf(
  head: FileUpload,
  rest: AsyncIterator<FileUpload>,
  measure: Measure,
  reservation: UploadReservation,
): AsyncGenerator<Uint8Array> {
  for (let next: IteratorResult<FileUpload> = { value: head }; !next.done; next = await rest.next()) {
    const { app, name, contentType, chunk } = next.value;
    if (next.value !== head) {
      const named = app ? "app" : name ? "name" : contentType ? "content_type" : undefined;
      if (named) throw invalid(named, `Field ${named} is set on the first message only; the following carry chunks.`);
    }
    if (chunk.length === 0) continue;
    measure.add(chunk);
    const reserving = reservation.cover(measure.size);
    if (reserving) await reserving;
    yield chunk;
  }
}

/** 503 for a blob store that failed: nothing was stored; the cause is logged, never answered. */
export function storeUnavailable(ctx: MediaContext, error: BlobUnavailableError) {
  ctx.logger.error({ err: error }, "the blob store failed");
  return problem(503, "media.store_unavailable", "The file store is unavailable; nothing was stored. Try again later.");
}
