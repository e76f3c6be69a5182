import { create } from "@bufbuild/protobuf";
import { randomBytes } from "node:crypto";
import { FileReadRequestSchema } from "../../../../gen/pf/media/v1/media_pb.js";
import type { Job } from "../../../../gen/pf/tools/v1/jobs_pb.js";
import { measured, TooLargeError, type Measured } from "../../../kit/blobs/measure.js";
import { BlobUnavailableError } from "../../../kit/blobs/store.js";
import { invalid, problem } from "../../../kit/handler/problem.js";
import type { Reservation } from "../../../kit/quotas/quotas.js";
import { relayFailure } from "../../../kit/rpc/relay-failure.js";
import type { ToolDescriptor } from "../../catalogue/descriptor.js";
import type { ToolsContext } from "../../context.js";
import { insertJob, jobById, jobByIdempotencyKey, jobView, type StoredJobFile } from "../../db/jobs.js";
import type { JsonObject } from "../../catalogue/descriptor.js";
import { takeQuota } from "../quota.js";
import { accepts, essenceOf, fileNameOf, fileRulesOf, inputBlobKey, requestHashOf, type FileRules } from "./files.js";
import { jobIdFrom } from "./ids.js";

/**
 * One message of a job's creation as far as its files go (a CreateJob message, a run's RunRequest): a message
 * naming a file (`fileName`, `fileType`) starts it, its bytes follow in `chunk` (of that message and the next ones).
 */
export interface FilePiece {
  fileName: string;
  fileType: string;
  chunk: Uint8Array;
}

/** What else a creation may carry: media objects read as input files after the uploaded ones, an idempotency key. */
export interface JobOptions {
  mediaKeys?: readonly string[];
  idempotencyKey?: string;
}

/**
 * Creates a job of a job tool (one the caller may run here, its input valid already) owned by `owner`, with its
 * input files: those `pieces` upload, streamed to the blob store as they arrive (capped, typed and digested on
 * the way), then the media objects `mediaKeys` names, read from media. The tool's cost is held from the owner's
 * quota before any byte is stored and taken in the transaction that writes the job row, its input file rows and
 * its `queued` event, once every file is stored: a creation that fails stores nothing and takes nothing. With an
 * idempotency key, a repeat of the same request (the same tool, input and files) answers the owner's job under
 * it, and another request 409 idempotency.mismatch. The run route creates its jobs here too.
 */
export async function createJob(
  ctx: ToolsContext,
  owner: string,
  tool: ToolDescriptor,
  input: JsonObject,
  pieces: AsyncIterable<FilePiece>,
  options: JobOptions = {},
): Promise<Job> {
  if (tool.execution !== "job") throw new Error(`${tool.id} is not a job tool`);
  const key = options.idempotencyKey || null;
  const mediaKeys = options.mediaKeys ?? [];
  const rules = fileRulesOf(tool, ctx.settings.maxFileBytes);
  // The request's uploaded files by their names, types and digests; media objects by their keys.
  const hashOf = (uploads: StoredJobFile[]) =>
    requestHashOf({
      tool: tool.id,
      input,
      mediaKeys,
      files: uploads.map(({ name, contentType, sha256 }) => ({ name, contentType, sha256 })),
    });
  if (key) {
    const earlier = await jobByIdempotencyKey(ctx.orm.em.fork(), owner, key);
    // A repeat sends its files again: their digests tell whether it is the same request; nothing is stored.
    if (earlier) return repeated(ctx, earlier.id, earlier.requestHash, hashOf(await digests(pieces, rules)));
  }
  const id = jobIdFrom(randomBytes(16));
  const held = await takeQuota(ctx, owner, tool);
  const stored: StoredJobFile[] = [];
  try {
    await storeUploads(ctx, id, pieces, rules, stored);
    const requestHash = hashOf(stored);
    await storeMediaObjects(ctx, id, mediaKeys, rules, stored);
    if (stored.length === 0 && rules.maxCount > 0)
      throw problem(400, "tools.file.missing", `The tool ${tool.id} takes an input file; none was sent.`);
    const created = await ctx.transaction(async (em) => {
      const row = await insertJob(
        em,
        {
          id,
          tool: tool.id,
          family: tool.family,
          owner,
          input,
          idempotencyKey: key,
          requestHash,
          retryOf: null,
          createdAt: ctx.clock.now(),
        },
        stored,
      );
      if (!row) return undefined;
      await held.settle(tool.cost, em);
      return jobView(em, row);
    });
    if (created) return created;
    // A concurrent creation under the same key committed first: this one's files and units go back.
    await giveBack(ctx, held, stored);
    const earlier = (await jobByIdempotencyKey(ctx.orm.em.fork(), owner, key!))!;
    return await repeated(ctx, earlier.id, earlier.requestHash, requestHash);
  } catch (error) {
    await giveBack(ctx, held, stored);
    throw error;
  }
}

/** A repeat under an idempotency key: the same request answers its job; another is 409 idempotency.mismatch. */
async function repeated(ctx: ToolsContext, id: string, storedHash: string, hash: string): Promise<Job> {
  if (storedHash !== hash)
    throw problem(409, "idempotency.mismatch", "This idempotency key was used with a different request.");
  const em = ctx.orm.em.fork();
  return jobView(em, (await jobById(em, id))!);
}

/** What a creation that failed stored and held goes back: its blobs are deleted and its units released. */
async function giveBack(ctx: ToolsContext, held: Reservation, stored: StoredJobFile[]): Promise<void> {
  for (const file of stored.splice(0))
    await ctx.blobs.delete(file.blobKey).catch((error: unknown) => {
      ctx.logger.error({ err: error, key: file.blobKey }, "an input blob of a job never created stays behind");
    });
  await held.release().catch((error: unknown) => {
    ctx.logger.error({ err: error }, "a job's quota units were not given back; the sweep will");
  });
}

/** One uploaded file as it begins: its name, type and bytes (its first chunk, then those that follow). */
interface Upload {
  name: string;
  contentType: string;
  bytes: AsyncIterable<Uint8Array>;
}

/**
 * The files of a creation's messages, one at a time: each file's bytes must be read (or left, which ends the
 * reading) before the next file is asked for. Bytes before any file is named are refused.
 */
async function* uploadsOf(pieces: AsyncIterable<FilePiece>): AsyncGenerator<Upload> {
  const messages = pieces[Symbol.asyncIterator]();
  let next = await messages.next();
  const starts = (piece: FilePiece) => piece.fileName !== "" || piece.fileType !== "";
  while (!next.done) {
    const head = next.value;
    if (!starts(head)) {
      if (head.chunk.length > 0) throw invalid("file_name", "A file's bytes come after a message naming the file.");
      next = await messages.next();
      continue;
    }
    let done = false;
    const bytes = async function* () {
      if (head.chunk.length > 0) yield head.chunk;
      for (next = await messages.next(); !next.done && !starts(next.value); next = await messages.next())
        if (next.value.chunk.length > 0) yield next.value.chunk;
      done = true;
    };
    yield { name: head.fileName, contentType: head.fileType, bytes: bytes() };
    if (!done) throw new Error("a file's bytes were not read to their end before the next file");
  }
}

/** A file's name, type and count checked against the tool's rules before any of its bytes is stored. */
function checkedUpload(rules: FileRules, n: number, name: string, type: string) {
  if (n > rules.maxCount)
    throw problem(400, "tools.file.too_many", `The tool takes at most ${rules.maxCount} input files.`, {
      limit: rules.maxCount,
    });
  const contentType = essenceOf(type);
  if (!accepts(rules, contentType))
    throw problem(415, "tools.file.unsupported", `The tool does not take ${contentType} files.`, {
      accept: [...rules.accept],
    });
  return { name: fileNameOf(name, n), contentType };
}

/** Streams each uploaded file to the blob store as it arrives; `stored` lists what is stored, as it is. */
async function storeUploads(
  ctx: ToolsContext,
  id: string,
  pieces: AsyncIterable<FilePiece>,
  rules: FileRules,
  stored: StoredJobFile[],
): Promise<void> {
  for await (const upload of uploadsOf(pieces)) {
    const n = stored.length + 1;
    const file = checkedUpload(rules, n, upload.name, upload.contentType);
    stored.push({ ...file, ...(await put(ctx, inputBlobKey(id, n), upload.bytes, file.contentType, rules)) });
  }
}

/** Reads each media object into the blob store (the job keeps its own copy: media may delete the object). */
async function storeMediaObjects(
  ctx: ToolsContext,
  id: string,
  keys: readonly string[],
  rules: FileRules,
  stored: StoredJobFile[],
): Promise<void> {
  for (const key of keys) {
    const n = stored.length + 1;
    const messages = ctx.media.serveFile(create(FileReadRequestSchema, { key }))[Symbol.asyncIterator]();
    const first = await messages.next().catch((error: unknown) => relayFailure("media", error));
    const object = first.done ? undefined : first.value.file;
    if (!object) throw new Error(`media answered ${key} without its file`);
    const file = checkedUpload(rules, n, object.name, object.contentType);
    if (object.size > BigInt(rules.maxBytes)) throw tooLarge(rules.maxBytes);
    const bytes = async function* () {
      if (first.value?.body?.data.length) yield first.value.body.data;
      for (let next = await messages.next(); !next.done; next = await messages.next())
        if (next.value.body?.data.length) yield next.value.body.data;
    };
    stored.push({ ...file, ...(await put(ctx, inputBlobKey(id, n), bytes(), file.contentType, rules)) });
  }
}

/** Stores one file's bytes under `key`, capped at the tool's bound, measured and digested on the way. */
async function put(
  ctx: ToolsContext,
  key: string,
  bytes: AsyncIterable<Uint8Array>,
  contentType: string,
  rules: FileRules,
): Promise<{ size: number; sha256: string; blobKey: string }> {
  const into: Measured = { size: 0, sha256: "" };
  try {
    await ctx.blobs.put(key, measured(bytes, rules.maxBytes, into), contentType);
  } catch (error) {
    if (error instanceof TooLargeError) throw tooLarge(error.limit);
    if (error instanceof BlobUnavailableError) {
      ctx.logger.error({ err: error }, "the blob store failed");
      throw problem(503, "tools.store_unavailable", "The file store is unavailable; nothing was stored. Try again.");
    }
    throw error;
  }
  return { ...into, blobKey: key };
}

/** A repeat's uploaded files, read to their ends for their digests only (their rules still hold). */
async function digests(pieces: AsyncIterable<FilePiece>, rules: FileRules): Promise<StoredJobFile[]> {
  const files: StoredJobFile[] = [];
  for await (const upload of uploadsOf(pieces)) {
    const file = checkedUpload(rules, files.length + 1, upload.name, upload.contentType);
    const into: Measured = { size: 0, sha256: "" };
    const reading = measured(upload.bytes, rules.maxBytes, into);
    try {
      while (!(await reading.next()).done);
    } catch (error) {
      throw error instanceof TooLargeError ? tooLarge(error.limit) : error;
    }
    files.push({ ...file, ...into, blobKey: "" });
  }
  return files;
}

function tooLarge(limit: number) {
  return problem(413, "tools.file.too_large", `An input file is larger than the limit of ${limit} bytes.`, { limit });
}
