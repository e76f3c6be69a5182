import type { DescField, JsonObject, Message, Registry } from "@bufbuild/protobuf";
import type { FastifyRequest } from "fastify";
import { rpcName, servedAsWebSocket, type Binding } from "./bindings.js";
import { decode } from "./decode.js";
import {
  applyQuery,
  jsonTextTargets,
  pathTarget,
  queryTargets,
  setPathField,
  type FieldTarget,
  type QueryTargets,
} from "./fields.js";
import { invalid } from "../services/kit/handler/problem.js";
import { routerParams } from "./template.js";

/** The input fields a binding's path and query set (the body's are the binding's); read by the mapper and by OpenAPI. */
export interface RequestFields {
  /** One target per path variable, in template order. */
  readonly path: readonly FieldTarget[];
  readonly query: QueryTargets;
  /** What an upload's form text fields set: the query's fields, and message fields as JSON text (jsonTextTargets). */
  readonly form: QueryTargets;
}

export function requestFields(binding: Binding): RequestFields {
  const input = binding.method.input;
  const { bodyField } = binding;
  try {
    const path = binding.template.variables.map((variable) => pathTarget(input, variable.field));
    // With `body: "*"` every field comes from the body or the path: no query parameters.
    const excluded = new Set([...path.map((target) => target.path), ...(bodyField ? [bodyField.name] : [])]);
    if (binding.body === "*") return { path, query: new Map(), form: new Map() };
    const query = queryTargets(input, excluded);
    if (servedAsWebSocket(binding)) return { path, query: envelopeOnly(query), form: new Map() };
    return { path, query, form: new Map([...query, ...jsonTextTargets(input, excluded)]) };
  } catch (error) {
    throw new Error(`${rpcName(binding.method)}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * A WebSocket's query sets its first frame's envelope only (websocket.ts): top-level fields outside any oneof
 * (`ControlFrame.robot_id`), never what a frame is.
 */
function envelopeOnly(query: QueryTargets): QueryTargets {
  return new Map([...query].filter(([, target]) => target.steps.length === 1 && target.field.oneof === undefined));
}

/** Builds a binding's input message from a request; malformed input throws a 400 request.invalid problem. */
export type RequestMapper = (request: FastifyRequest) => Message;

export function requestMapper(binding: Binding, registry: Registry): RequestMapper {
  const bodyJson = bodyReader(binding.body, binding.bodyField);
  const withPathAndQuery = pathAndQueryMapper(binding, registry);
  return (request) => withPathAndQuery(request, bodyJson(request));
}

/**
 * Fills `json` with a request's path variables and query parameters (and
 * `fields`, an upload's form text fields: named and converted as query
 * parameters are, and a message field from its JSON text), then decodes it as
 * the binding's input message. A parameter may not set a field `json` holds
 * already (an upload's JSON body).
 */
export function pathAndQueryMapper(
  binding: Binding,
  registry: Registry,
): (request: FastifyRequest, json: JsonObject, fields?: Record<string, string | string[]>) => Message {
  const { path, query, form } = requestFields(binding);
  const params = routerParams(binding.template);
  const input = binding.method.input;
  return (request, json, fields) => {
    const values = request.params as Record<string, string>;
    for (let i = 0; i < path.length; i++) setPathField(json, path[i], path[i].convert(values[params[i]]));
    const given = request.query as Record<string, string | string[]>;
    if (fields) applyQuery(json, form, joined(given, fields));
    else applyQuery(json, query, given);
    return decode(input, json, registry);
  };
}

/** Query parameters and form fields as one set of parameters: a name given in both is given twice. */
function joined(
  query: Record<string, string | string[]>,
  fields: Record<string, string | string[]>,
): Record<string, string | string[]> {
  const all: Record<string, string | string[]> = { ...query };
  for (const [name, value] of Object.entries(fields)) all[name] = name in all ? [all[name], value].flat() : value;
  return all;
}

/** The request JSON the body starts it as, by the binding's body rule. */
function bodyReader(body: string, bodyField: DescField | undefined): (request: FastifyRequest) => JsonObject {
  if (body === "*") {
    return (request) => {
      const value = request.body;
      if (value === undefined) return {};
      if (value === null || typeof value !== "object" || Array.isArray(value)) {
        throw invalid("body", "The body must be a JSON object.");
      }
      return value as JsonObject;
    };
  }
  if (bodyField) {
    return (request) => (request.body === undefined ? {} : { [bodyField.name]: request.body as JsonObject });
  }
  return (request) => {
    if (request.body !== undefined || sendsBody(request)) throw invalid("body", "This route takes no body.");
    return {};
  };
}

/** Whether a request carries a body Fastify did not read (GET and HEAD bodies are never parsed). */
function sendsBody(request: FastifyRequest): boolean {
  const length = request.headers["content-length"];
  return request.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
}
