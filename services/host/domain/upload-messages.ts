import type { DeployUpload } from "../../../gen/pf/host/v1/deploys_pb.js";
import { invalid } from "../../kit/handler/problem.js";
import type { UploadSource } from "./archive/index.js";

/** The media types of an archive upload's first message (a raw body through the gateway, or a gRPC client's). */
const ARCHIVE_TYPES = new Set(["", "application/x-tar", "application/gzip", "application/x-gzip"]);

/**
 * An upload's messages as the validator reads them, its site from the first. A first message without a name is an
 * archive (tar or tar.gz) whose bytes follow; one with a name starts a file, as each later message with a name does
 * (multipart parts). Later messages carry bytes only, or start the next file; nothing is held beyond one message.
 */
export async function uploadOf(
  messages: AsyncIterable<DeployUpload>,
): Promise<{ siteId: string; source: UploadSource }> {
  const rest = messages[Symbol.asyncIterator]();
  const head = await rest.next();
  if (head.done || head.value.id === "") throw invalid("id", "The upload's first message names the site (id).");
  const first = head.value;
  if (first.name !== "") return { siteId: first.id, source: { kind: "files", files: filesOf(first, rest) } };
  if (!ARCHIVE_TYPES.has(first.contentType.split(";")[0].trim().toLowerCase()))
    throw invalid("content_type", "An upload is a tar or tar.gz archive, or files each named by its path.");
  return { siteId: first.id, source: { kind: "archive", body: archiveOf(first, rest) } };
}

async function* archiveOf(first: DeployUpload, rest: AsyncIterator<DeployUpload>): AsyncGenerator<Uint8Array> {
  if (first.chunk.length > 0) yield first.chunk;
  for (let next = await rest.next(); !next.done; next = await rest.next()) {
    if (next.value.name !== "")
      throw invalid("name", "An archive upload is one body: no message after the first names a file.");
    yield* chunkOf(next.value);
  }
}

/** Each file: its name and type from the message that starts it, its bytes from the messages up to the next one. */
async function* filesOf(
  first: DeployUpload,
  rest: AsyncIterator<DeployUpload>,
): AsyncGenerator<{ name: string; contentType: string; body: AsyncIterable<Uint8Array> }> {
  let start: DeployUpload | undefined = first;
  while (start) {
    const file = start;
    // Set once the file's messages end: to the next file's first message, or undefined at the end of the upload.
    let after: { next: DeployUpload | undefined } | undefined;
    const more = async (): Promise<DeployUpload | undefined> => {
      const read = await rest.next();
      if (!read.done && read.value.name === "") return read.value;
      after = { next: read.done ? undefined : read.value };
      return undefined;
    };
    async function* body(): AsyncGenerator<Uint8Array> {
      if (file.chunk.length > 0) yield file.chunk;
      for (let next = await more(); next; next = await more()) yield* chunkOf(next);
    }
    yield { name: file.name, contentType: file.contentType, body: body() };
    // What the reader of a file left unread is skipped, so the next file starts where it does.
    while (!after) await more();
    start = after.next;
    if (start && start.id !== "") throw invalid("id", "Only the upload's first message names the site.");
  }
}

function* chunkOf(message: DeployUpload): Generator<Uint8Array> {
  if (message.id !== "" || message.contentType !== "")
    throw invalid(message.id !== "" ? "id" : "content_type", "A message carrying bytes names nothing else.");
  if (message.chunk.length > 0) yield message.chunk;
}
