/**
 * Streamed uploads (ARCHITECTURE.md "Gateway": multipart uploads): the declared
 * hook of client-streaming RPCs with `(pf.v1.upload)`. The body is read as it
 * arrives and handed on chunk by chunk, never held whole nor base64'd into
 * JSON: the RPC's first message carries the path variables, query parameters,
 * form fields and the file's name and media type; each following message one
 * chunk of the file in the field the binding's `body` names. With `many_files`,
 * each further file part starts with a message of its own name and media type,
 * then its chunks. The RPC stores, caps and digests what it reads.
 *
 * - Admission runs first, as on every route (admission.ts): 401 and 403 before
 *   any byte of the body is read.
 * - Multipart form data: exactly one file part (`many_files`: one or more, each
 *   with a filename), text fields before it; a second file (but `many_files`),
 *   a field after a file, no file, or a form that ends early is 400. A text
 *   field naming a message field (a google.protobuf.Struct) is its JSON text;
 *   one naming a repeated field may come several times.
 *   Raw bodies: a media type the option lists, whose whole body is the file.
 *   JSON bodies, where the option lists `application/json`: the stream's first
 *   and only message, in proto JSON, with the path and query as a form's
 *   fields; no file follows (the body names none: no bytes, name or type).
 *   Any other media type is 415.
 * - The route's `max_bytes` bounds the whole body (a JSON body: the gateway's
 *   JSON body limit): a declared length over it is 413 at once, and a body
 *   growing past it is 413 as soon as it does.
 * - A body must keep arriving: no byte for the gateway's body timeout is 408,
 *   and so is a body slower than the minimum rate once that timeout's grace
 *   has passed (a slow-loris upload never holds a socket and a temporary file
 *   for long).
 * - The RPC sees the end of its stream only once the whole form was read and
 *   found well formed; any fault above makes its stream fail instead, so it
 *   stores nothing. A refusal before the body ends closes the connection after
 *   a short lingering read (connection.ts); a body too slow closes it at once.
 */
import {
  create,
  getOption,
  hasOption,
  ScalarType,
  type DescField,
  type DescMessage,
  type DescMethodClientStreaming,
  type JsonObject,
  type Message,
} from "@bufbuild/protobuf";
import busboy from "busboy";
import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from "fastify";
import { PassThrough, Transform, type Readable } from "node:stream";
import { success_statuses as successStatuses, upload as uploadOption, type Upload } from "../gen/pf/v1/options_pb.js";
import { invalid, problem, problemOf } from "../services/kit/handler/problem.js";
import { admittedRequest } from "./admission.js";
import { closeAfterAnswer, closeAtOnce } from "./connection.js";
import { rpcName, type Binding } from "./bindings.js";
import { forwardedHeaders } from "./headers.js";
import { parseJsonText } from "./json-text.js";
import { sendFailure } from "./problems.js";
import { pathAndQueryMapper } from "./request.js";
import { resultRenderer, sendResult } from "./response.js";
import type { RouteContext } from "./route-context.js";

/** The deadline of an upload's RPC when the route context gives none: long uploads take long. */
export const DEFAULT_UPLOAD_TIMEOUT_MS = 60 * 60_000;

/** The slowest average an upload's body may arrive at, in bytes a second, when the route context gives none. */
export const DEFAULT_UPLOAD_MIN_RATE = 4096;

/** The largest JSON body when the route context gives none: Fastify's default, as PF_BODY_LIMIT's. */
export const DEFAULT_JSON_BODY_LIMIT = 1024 * 1024;

/** The upload option of a client-streaming binding, when it has one. */
export function uploadOf(binding: Binding): Upload | undefined {
  const { method } = binding;
  return method.methodKind === "client_streaming" && hasOption(method, uploadOption)
    ? getOption(method, uploadOption)
    : undefined;
}

/** An upload route's content-type parser: none; the handler reads the body itself, as it arrives. */
export function uploadParsers(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser("*", (_request, _payload, done) => done(null));
}

/** The file of an upload, once its part (or the raw body) begins. */
interface FilePart {
  fields: Record<string, string | string[]>;
  name: string;
  type: string;
  bytes: Readable;
}

export function uploadHandler(binding: Binding, context: RouteContext): RouteHandlerMethod {
  const option = uploadOf(binding)!;
  const method = binding.method as DescMethodClientStreaming;
  const chunkField = bytesField(binding);
  const nameField = stringField(method.input, option.nameField);
  const typeField = stringField(method.input, option.typeField);
  const limits = { file: Number(option.maxBytes), json: context.bodyLimit ?? DEFAULT_JSON_BODY_LIMIT };
  const mapFirst = pathAndQueryMapper(binding, context.registry);
  // What a JSON body may not name: the file it does not carry.
  const fileFields = [chunkField, nameField, typeField].filter((field) => field !== undefined);
  const render = resultRenderer(binding, context.registry);
  const status = getOption(method, successStatuses)[0] ?? 200;
  const timeoutMs = context.uploadTimeoutMs ?? DEFAULT_UPLOAD_TIMEOUT_MS;
  const pace = { idleMs: context.bodyTimeoutMs ?? 30_000, minRate: context.uploadMinRate ?? DEFAULT_UPLOAD_MIN_RATE };
  const { transport, logger } = context;
  return async (request, reply) => {
    const cancel = new AbortController();
    let body: UploadBody | undefined;
    let answer: { header: Headers; output: Message } | undefined;
    let failure: unknown;
    try {
      // The path and query are checked before any byte of the body is read.
      mapFirst(request, {});
      const form = formOf(request, option);
      const maxBytes = form.kind === "json" ? limits.json : limits.file;
      const declared = Number(request.headers["content-length"] ?? "0");
      if (declared > maxBytes) throw tooLarge(maxBytes);
      body = new UploadBody(request, form, maxBytes, pace, option.manyFiles);
      const read = body;
      const opened = (await read.next())!;
      let messages: AsyncIterable<Message>;
      if (form.kind === "json") {
        // Read whole (it is small) and decoded before the call: a malformed body never reaches the RPC.
        const json = jsonBody(await textOf(opened.bytes), fileFields);
        await read.finished;
        messages = only(mapFirst(request, json));
      } else {
        const first = mapFirst(request, {}, opened.fields) as unknown as Record<string, unknown>;
        // A single file's name and type fill only what the form left empty; each of many files names itself.
        const named = (message: Record<string, unknown>, part: FilePart) => {
          if (nameField && (option.manyFiles || message[nameField.localName] === ""))
            message[nameField.localName] = part.name;
          if (typeField && (option.manyFiles || message[typeField.localName] === ""))
            message[typeField.localName] = part.type;
          return message as unknown as Message;
        };
        messages = (async function* (): AsyncGenerator<Message> {
          for (let part: FilePart | undefined = opened; part; part = option.manyFiles ? await read.next() : undefined) {
            yield named(part === opened ? first : (create(method.input) as unknown as Record<string, unknown>), part);
            for await (const chunk of part.bytes)
              yield create(method.input, { [chunkField.localName]: chunk as Uint8Array } as never);
          }
          // The stream ends only once the whole body was read and well formed.
          await read.finished;
        })();
      }
      const admitted = admittedRequest(request);
      const header = admitted?.headers ?? forwardedHeaders(request);
      const response = await transport.stream(method, cancel.signal, timeoutMs, header, messages, admitted?.values);
      let output: Message | undefined;
      for await (const message of response.message) output = message;
      if (!output) throw new Error(`${rpcName(method)} answered no message`);
      answer = { header: response.header, output };
    } catch (error) {
      cancel.abort();
      // The gateway's own finding about the body, rather than what the RPC made of its failed stream.
      failure = body?.fault ?? error;
    } finally {
      body?.stop();
    }
    if (!answer) {
      const tooSlow = body?.fault !== undefined && problemOf(body.fault).status === 408;
      return sendFailure(request, tooSlow ? closeAtOnce(reply) : closeAfterAnswer(request, reply), failure, logger);
    }
    return sendResult(reply, status, answer.header, render, answer.output);
  };
}

type Form = { kind: "multipart" } | { kind: "json" } | { kind: "raw"; type: string };

/** How the body carries the file (or, JSON, the message), by its media type; 415 for a type the route does not take. */
function formOf(request: FastifyRequest, option: Upload): Form {
  const type = (request.headers["content-type"] ?? "").split(";")[0].trim().toLowerCase();
  if (!option.mediaTypes.includes(type))
    throw problem(
      415,
      "request.unsupported_media_type",
      `Send the body as ${option.mediaTypes.join(" or ")}${type ? `, not ${type}` : ""}.`,
    );
  if (type === "multipart/form-data") return { kind: "multipart" };
  return type === "application/json" ? { kind: "json" } : { kind: "raw", type };
}

/** A body's bytes as text, once they all arrived (a JSON body, bounded by the JSON body limit). */
async function textOf(bytes: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of bytes) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * A JSON body as the request JSON its message starts from: an object (an empty body is an empty one), naming no
 * file field: a JSON body carries no file, and its bytes are never base64'd into JSON.
 */
function jsonBody(text: string, fileFields: readonly DescField[]): JsonObject {
  const json = text === "" ? {} : parseJsonText(text);
  if (json === null || typeof json !== "object" || Array.isArray(json))
    throw invalid("body", "The body must be a JSON object.");
  for (const field of fileFields)
    if (Object.hasOwn(json, field.name) || Object.hasOwn(json, field.jsonName))
      throw invalid(field.name, `A JSON body carries no file: send files (and ${field.name}) as multipart/form-data.`);
  return json;
}

/** One message as a stream. */
async function* only(message: Message): AsyncGenerator<Message> {
  yield message;
}

function tooLarge(maxBytes: number) {
  return problem(413, "request.too_large", `The body is larger than this route's limit of ${maxBytes} bytes.`);
}

/** Form limits: fields are short text; files are the large parts, one (or with `many_files`, as many as come). */
const MANY_FILES_LIMITS = { fields: 32, fieldSize: 16 * 1024, headerPairs: 64 };
const FORM_LIMITS = { ...MANY_FILES_LIMITS, files: 1, parts: 33 };

/** How fast a body must arrive: some byte every `idleMs`, and `minRate` bytes a second on average after `idleMs`. */
interface Pace {
  idleMs: number;
  minRate: number;
}

/**
 * Reads one upload's body: counted against the route's limit, watched for
 * idleness and pace, and (multipart) split into its fields and its file parts
 * (one, or with `manyFiles` any number), handed out in order as they begin.
 * The first fault found is kept, and makes what reads the files fail.
 */
class UploadBody {
  /** Settles when the whole body was read: fulfilled when well formed, rejected at the first fault. */
  readonly finished: Promise<void>;
  fault?: Error;
  private readonly counted: Transform;
  private readonly idle: NodeJS.Timeout;
  private slow?: NodeJS.Timeout;
  /** The file being read; the files begun and not yet asked for; whether no other file will begin. */
  private file?: Readable;
  private readonly begun: FilePart[] = [];
  private ended = false;
  private wake?: () => void;
  private rejectFinished!: (error: Error) => void;

  constructor(
    private readonly request: FastifyRequest,
    form: Form,
    maxBytes: number,
    { idleMs, minRate }: Pace,
    manyFiles: boolean,
  ) {
    let resolveFinished!: () => void;
    this.finished = new Promise((resolve, reject) => ((resolveFinished = resolve), (this.rejectFinished = reject)));
    // Awaited later or never (a fault before the file): never an unhandled rejection.
    this.finished.catch(() => undefined);
    const end = () => {
      this.ended = true;
      this.wake?.();
      resolveFinished();
    };
    this.idle = setTimeout(
      () => this.fail(problem(408, "request.timeout", `No part of the body arrived for ${idleMs} ms.`)),
      idleMs,
    );
    let received = 0;
    // The body is due `idleMs` after it began plus a second for every `minRate` bytes that arrived (Apache's
    // mod_reqtimeout MinRate): a steady trickle that keeps the idle timer fed still ends here.
    const began = Date.now();
    const paced = () => {
      const left = began + idleMs + (received * 1000) / minRate - Date.now();
      if (left > 0) return void (this.slow = setTimeout(paced, left));
      this.fail(problem(408, "request.timeout", `The body arrived slower than ${minRate} bytes a second.`));
    };
    this.slow = setTimeout(paced, idleMs);
    this.counted = new Transform({
      transform: (chunk: Buffer, _encoding, callback) => {
        received += chunk.length;
        if (received > maxBytes) return callback(this.fail(tooLarge(maxBytes)));
        this.idle.refresh();
        callback(null, chunk);
      },
    });
    this.counted.on("error", (error) => this.fail(error));
    request.raw.on("close", () => {
      if (!request.raw.complete) this.fail(invalid("body", "The body ended before it was complete."));
    });
    request.raw.pipe(this.counted);

    // A raw body is the file; a JSON body is read as one, and decoded once whole.
    if (form.kind !== "multipart") {
      const bytes = this.counted.pipe(new PassThrough());
      bytes.on("end", end);
      this.begin({ fields: {}, name: "", type: form.kind === "raw" ? form.type : "application/json", bytes });
      return;
    }
    const fields: Record<string, string | string[]> = {};
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: request.headers,
        preservePath: true,
        defParamCharset: "utf8",
        limits: manyFiles ? MANY_FILES_LIMITS : FORM_LIMITS,
      });
    } catch (error) {
      this.fail(invalid("body", `The multipart body cannot be read: ${(error as Error).message}.`));
      return;
    }
    parser.on("field", (name, value, info) => {
      if (this.file) return this.fail(invalid(name, "Form fields come before the file part."));
      if (info.valueTruncated) return this.fail(invalid(name, `Form field ${name} is too long.`));
      fields[name] = name in fields ? [fields[name], value].flat() : value;
    });
    parser.on("file", (_name, bytes, info) => {
      this.begin({ fields, name: info.filename ?? "", type: info.mimeType, bytes });
      // Many files are told apart by their names.
      if (manyFiles && !info.filename) this.fail(invalid("file", "Each file part needs a filename."));
    });
    parser.on("filesLimit", () => this.fail(invalid("file", "The form holds more than one file part.")));
    for (const limit of ["fieldsLimit", "partsLimit"])
      parser.on(limit, () => this.fail(invalid("body", "The form holds too many parts.")));
    parser.on("error", (error: Error) =>
      this.fail(invalid("body", `The multipart body is malformed or ends early: ${error.message}.`)),
    );
    parser.on("close", () => {
      if (!this.file) return this.fail(invalid("file", "The form holds no file part."));
      end();
    });
    this.counted.pipe(parser);
  }

  /**
   * The next file, once its part (or the raw body) begins; none once the whole body was read. A file is asked for
   * only once the one before it was read to its end, so the body is read no further ahead than the RPC.
   */
  async next(): Promise<FilePart | undefined> {
    while (!this.fault && this.begun.length === 0 && !this.ended) await new Promise<void>((wake) => (this.wake = wake));
    if (this.fault) throw this.fault;
    return this.begun.shift();
  }

  /**
   * Takes a file's bytes. A fault destroys them with its error, which `finished` already answers: the listener
   * keeps a stream nobody reads any more (the RPC ended, or a second file part arrived) from throwing it.
   */
  private begin(part: FilePart): void {
    part.bytes.on("error", () => undefined);
    this.file = part.bytes;
    this.begun.push(part);
    this.wake?.();
  }

  /** Keeps the first fault and fails what waits on the body; answers it. */
  fail(error: Error): Error {
    if (this.fault) return this.fault;
    this.fault = error;
    this.wake?.();
    this.rejectFinished(error);
    this.file?.destroy(error);
    this.stop();
    return error;
  }

  /** Stops reading: the rest of the body is left to the connection's close (connection.ts). */
  stop(): void {
    clearTimeout(this.idle);
    clearTimeout(this.slow);
    this.request.raw.unpipe(this.counted);
  }
}

function bytesField(binding: Binding): DescField {
  const field = binding.bodyField;
  if (field?.fieldKind !== "scalar" || field.scalar !== ScalarType.BYTES)
    throw new Error(`${rpcName(binding.method)}: an upload's body must name one bytes field`);
  return field;
}

function stringField(message: DescMessage, name: string): DescField | undefined {
  if (name === "") return undefined;
  const field = message.fields.find((each) => each.name === name);
  if (field?.fieldKind !== "scalar" || field.scalar !== ScalarType.STRING)
    throw new Error(`${message.typeName}: upload field ${name} must be a string field`);
  return field;
}
