import type { Message, Registry } from "@bufbuild/protobuf";
import type { FastifyReply } from "fastify";
import type { Binding } from "./bindings.js";
import { STATUS_HEADER } from "../services/kit/handler/status.js";
import { COPIED_RESPONSE_HEADERS } from "./headers.js";
import { fieldJsonWriter, jsonWriter } from "./json-writer.js";

/** The JSON text of a binding's output message (or of its response_body field). */
export type ResultRenderer = (message: Message) => string;

export function resultRenderer(binding: Binding, registry: Registry): ResultRenderer {
  const schema = binding.method.output;
  const field = binding.responseField;
  // Compiled once per type (json-writer.ts): the text toJson and JSON.stringify would give, without the object between.
  const render: ResultRenderer = field ? fieldJsonWriter(schema, field, registry) : jsonWriter(schema, registry);
  // A handler answering from a cache returns the same message object again (answers are
  // never changed once returned), so its JSON is rendered once.
  const rendered = new WeakMap<Message, string>();
  return (message) => {
    let text = rendered.get(message);
    if (text === undefined) {
      text = render(message);
      rendered.set(message, text);
    }
    return text;
  };
}

/**
 * Sends an RPC's answer: the handler's ETag, Location and Cache-Control, and
 * as its status the one the handler answered (`answerStatus`), else `declared`
 * (the RPC's first success status); 204, 304 and redirects (`answerRedirect`)
 * without a body.
 */
export function sendResult(
  reply: FastifyReply,
  declared: number,
  header: Headers,
  render: ResultRenderer,
  message: Message,
): FastifyReply {
  for (const name of COPIED_RESPONSE_HEADERS) {
    const value = header.get(name);
    if (value !== null) reply.header(name, value);
  }
  const status = statusOf(header, declared);
  if (status === 204 || status === 304 || (status >= 300 && status < 400)) return reply.code(status).send();
  return reply.code(status).type("application/json").send(render(message));
}

function statusOf(header: Headers, declared: number): number {
  const text = header.get(STATUS_HEADER);
  if (text === null) return declared;
  const status = Number(text);
  // A handler bug, answered as a 500 by the caller's catch.
  if (!Number.isInteger(status) || status < 200 || status > 599)
    throw new Error(`handler set ${STATUS_HEADER}: ${text}`);
  return status;
}
