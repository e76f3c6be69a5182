import {
  createRegistry,
  fromJson,
  getOption,
  toJson,
  type DescMessage,
  type DescMethod,
  type JsonObject,
  type JsonValue,
} from "@bufbuild/protobuf";
import { ProblemSchema } from "../gen/pf/v1/problem_pb.js";
import { STATUS_CODES } from "node:http";
import {
  type Access,
  AccessSchema,
  designed,
  RateLimitSchema,
  type RelationRule,
  RelationRuleSchema,
  RelationSchema,
  relations as relationsOption,
  service_key,
  success_statuses as successStatuses,
} from "../gen/pf/v1/options_pb.js";
import { admitsAnonymous, routeAccessOf, type RouteAccess } from "../services/kit/auth/enforce.js";
import { routeFieldsOf } from "../services/kit/rpc/input.js";
import { declaredRateLimit } from "../services/kit/rpc/rate-limits.js";
import { onPublicSurface } from "../services/kit/rpc/surface.js";
import { servedAsWebSocket, type Binding } from "./bindings.js";
import { answersBytes } from "./bytes.js";
import { corsKind } from "./cors.js";
import { problemResponses, routeProblems } from "./openapi-problems.js";
import { PROBLEM_CONTENT_TYPE } from "./problems.js";
import { EVENT_STREAM_CONTENT_TYPE, eventRenderer } from "./sse.js";
import { exampleOf, heldMessage } from "./openapi-examples.js";
import { operationId, resourceTags } from "./openapi-names.js";
import { BINARY, requestOf } from "./openapi-request.js";
import { componentName, described, REF, SchemaComponents } from "./schemas.js";
import { openApiPath } from "./template.js";
import { uploadOf } from "./uploads.js";
import { WEBSOCKET_MAX_PAYLOAD } from "./websocket.js";

export interface DocumentScope {
  readonly title: string;
  /** The base path of one service (`/network`): the document's server, its paths relative to it. Unset: paths carry `/<key>`. */
  readonly basePath?: string;
}

/**
 * OpenAPI 3.1 of the bindings: one operation per binding, tagged by its
 * resource (openapi-names.ts), components named by schema id, the access of
 * each RPC as x-pf-* members and the problems it answers as responses. Only
 * the components the operations reach are kept.
 */
export function openApiDocument(bindings: readonly Binding[], scope: DocumentScope): JsonObject {
  const components = new SchemaComponents();
  const problem = problemSchema(components);
  const { tagOf, tags } = resourceTags(bindings, scope.basePath === undefined);
  const paths: Record<string, JsonObject> = {};
  for (const binding of bindings) {
    const path = (scope.basePath === undefined ? `/${binding.key}` : "") + openApiPath(binding.template);
    paths[path] ??= {};
    paths[path][binding.verb.toLowerCase()] = operation(binding, tagOf(binding), components, problem);
  }
  return {
    openapi: "3.1.0",
    info: { title: scope.title, version: "v1" },
    servers: [{ url: scope.basePath ?? "/" }],
    tags,
    paths,
    components: {
      schemas: reached(paths, components.schemas),
      securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
    },
  };
}

/**
 * The components the paths refer to, and those they refer to in turn: a
 * message documented in full where an operation's body leaves fields out
 * (openapi-request.ts) may be referred to by nothing else.
 */
function reached(paths: JsonObject, schemas: Record<string, JsonObject>): Record<string, JsonObject> {
  const found = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value !== null && typeof value === "object") {
      for (const [member, inner] of Object.entries(value)) {
        if (member !== "$ref" || typeof inner !== "string") visit(inner);
        else if (inner.startsWith(REF) && !found.has(inner.slice(REF.length))) {
          found.add(inner.slice(REF.length));
          visit(schemas[inner.slice(REF.length)]);
        }
      }
    }
  };
  visit(paths);
  return Object.fromEntries(Object.entries(schemas).filter(([name]) => found.has(name)));
}

/**
 * Whether a route is in the public document (served to callers without a
 * service token): one some rule opens to the public or to first-party callers.
 * Internal and partner routes are documented only to services.
 */
export function publiclyDocumented(binding: Binding): boolean {
  return onPublicSurface(binding.method);
}

function operation(binding: Binding, tag: string, components: SchemaComponents, problem: JsonObject): JsonObject {
  const { method } = binding;
  const reads = routeFieldsOf(method);
  const output = binding.responseField ? components.field(binding.responseField) : components.message(method.output);
  const access = routeAccessOf(method);
  const request = requestOf(binding, components);
  const webSocket = servedAsWebSocket(binding);
  const successes = answersBytes(binding)
    ? byteResponses(getOption(method, successStatuses), components.message(method.output))
    : method.methodKind === "server_streaming"
      ? eventStreamResponse(output)
      : webSocket
        ? WEBSOCKET_RESPONSE
        : successResponses(getOption(method, successStatuses), output);
  if (!showsExample(request)) exampleAnswer(binding, successes as Record<string, JsonObject>, components);
  return {
    operationId: operationId(binding),
    ...described(`${method.parent.typeName}.${method.name}`, method.name),
    tags: [tag],
    ...request,
    ...(uploadOf(binding) && { "x-pf-max-bytes": Number(uploadOf(binding)!.maxBytes) }),
    ...(webSocket && {
      "x-pf-websocket": {
        "client-messages": components.message(method.input),
        "server-messages": output,
        "max-message-bytes": WEBSOCKET_MAX_PAYLOAD,
      },
    }),
    responses: {
      ...successes,
      ...problemResponses(routeProblems(binding, access), problem),
      default: { description: "Problem", content: { [PROBLEM_CONTENT_TYPE]: { schema: problem } } },
    },
    // `{}`: a caller without a token is admitted too.
    security: access.rules.some(admitsAnonymous) ? [{ bearer: [] }, {}] : [{ bearer: [] }],
    ...accessMembers(method, access),
    "x-pf-cors": corsKind(binding),
    ...(getOption(method, designed) && { "x-pf-designed": true }),
    // A request schema shared by several routes: the fields this one reads (the others are refused).
    ...(reads && { "x-pf-request-fields": [...reads] }),
  };
}

/** Whether a path parameter or the body shows an example. */
function showsExample(request: { parameters: JsonObject[]; requestBody?: JsonObject }): boolean {
  const content = (request.requestBody?.content ?? {}) as Record<string, JsonObject>;
  return (
    request.parameters.some((each) => "example" in each) || Object.values(content).some((each) => "example" in each)
  );
}

/**
 * One example per operation: where the request shows none, the first success
 * answer with a body does, built from its schema as a body's is (a byte
 * answer's JSON form; an event stream's one event as sse.ts writes it). Of a
 * result's oneof, the member the RPC's name ends with (ListCashouts:
 * `cashouts`), else the first. Query parameters show none: "Try it out" would
 * send them.
 */
function exampleAnswer(binding: Binding, successes: Record<string, JsonObject>, components: SchemaComponents): void {
  const status = Object.keys(successes).find((each) => "content" in successes[each]);
  if (status === undefined) return;
  const content = successes[status].content as Record<string, JsonObject>;
  const { method, responseField } = binding;
  const json = content["application/json"];
  const stream = content[EVENT_STREAM_CONTENT_TYPE];
  if (json) {
    const bytes = answersBytes(binding);
    const message = responseField && !bytes ? heldMessage(responseField) : method.output;
    const example = exampleOf(answered(json.schema as JsonObject, method, message), components.schemas, message);
    // A byte answer's JSON form is answered when its bytes' field is unset.
    if (bytes && example !== null && typeof example === "object") delete (example as JsonObject)[responseField!.name];
    if (example !== undefined) json.example = example;
  } else if (stream) {
    const data = exampleOf(
      answered(stream["x-pf-event-data"] as JsonObject, method, method.output),
      components.schemas,
      method.output,
    );
    const event = data === undefined ? undefined : eventExample(method.output, data);
    if (event !== undefined) stream.example = event;
  }
}

/** The answer's schema with the oneof member the RPC's name ends with, if any, required: the one its example shows. */
function answered(schema: JsonObject, method: DescMethod, message: DescMessage | undefined): JsonObject {
  const rpc = method.name.toLowerCase();
  const [member] = (message?.oneofs ?? [])
    .flatMap((oneof) => oneof.fields)
    .filter((field) => rpc.endsWith(field.name.replace(/_/g, "")))
    .sort((one, other) => other.name.length - one.name.length);
  return member ? { ...schema, required: [member.name] } : schema;
}

/** One event as the stream writes it; none when the example does not read as the message (an Any). */
function eventExample(output: DescMessage, data: JsonValue): string | undefined {
  try {
    return eventRenderer(output, createRegistry())(fromJson(output, data));
  } catch {
    return undefined;
  }
}

/** The statuses a success answers with (200 unless the RPC says otherwise); 204 and 304 carry no body. */
function successResponses(statuses: readonly number[], output: JsonObject): JsonObject {
  const responses: JsonObject = {};
  for (const status of statuses.length > 0 ? statuses : [200]) {
    const description = STATUS_CODES[status] ?? "Success";
    responses[status] =
      status === 204 || status === 304
        ? { description }
        : { description, content: { "application/json": { schema: output } } };
  }
  return responses;
}

/** A byte answer (bytes.ts): the bytes in their own type, or the first message as JSON; 304 without a body. */
function byteResponses(statuses: readonly number[], whole: JsonObject): JsonObject {
  const responses: JsonObject = {};
  for (const status of statuses.length > 0 ? statuses : [200]) {
    const description = STATUS_CODES[status] ?? "Success";
    responses[status] =
      status === 304
        ? { description }
        : { description, content: { "*/*": { schema: BINARY }, "application/json": { schema: whole } } };
  }
  return responses;
}

/**
 * A server-streaming RPC answers text/event-stream: OpenAPI 3.1 has no schema
 * for a stream's items, so each event's `data:` (one output message) is named
 * by `x-pf-event-data`.
 */
function eventStreamResponse(output: JsonObject): JsonObject {
  return {
    200: {
      description:
        "An event stream: each event's data is one message as JSON; id: and event: as the gateway README says.",
      content: { [EVENT_STREAM_CONTENT_TYPE]: { schema: { type: "string" }, "x-pf-event-data": output } },
    },
  };
}

/**
 * A WebSocket (websocket.ts): OpenAPI 3.1 describes no messages after an
 * upgrade, so `x-pf-websocket` names the messages of each side's frames.
 */
const WEBSOCKET_RESPONSE: JsonObject = {
  101: {
    description:
      "Switching Protocols: a WebSocket, opened once the RPC's first message is there (the first WebSocket message); " +
      "a problem before it is answered instead. Each message either way is one proto JSON text of the messages " +
      "`x-pf-websocket` names, at most 1 MiB. Closes with 1000 when the RPC ends; 4000 + the problem's status " +
      "(4403, 4409…) when it fails, the reason starting with the problem code; 1003 on a binary message, 1007 on one " +
      "that is not the request's proto JSON, 1009 on one over 1 MiB; 1001 when the gateway closes. The gateway pings " +
      "every PF_WS_PING_MS and cuts a connection from which nothing came since the last ping.",
  },
};

/**
 * The RPC's access as x-pf-* members: its main rule's options, its
 * alternatives (`x-pf-alternatives`, each the same members unprefixed) and the
 * audience its tokens carry (`x-pf-token-audience`). The route's CORS is
 * documented as served (`x-pf-cors`), not per rule.
 */
function accessMembers(method: DescMethod, access: RouteAccess): JsonObject {
  const [main, ...alternatives] = access.rules;
  const members: JsonObject = {};
  for (const [name, value] of Object.entries(ruleMembers(method, main))) members[`x-pf-${name}`] = value;
  if (alternatives.length > 0) members["x-pf-alternatives"] = alternatives.map((rule) => ruleMembers(method, rule));
  members["x-pf-token-audience"] = access.audience;
  return members;
}

/**
 * One rule's options by their proto names in kebab case: capabilities always,
 * every other option only when set (toJson leaves out what is unset), enums by
 * their value names (`first-party`, `platform-staff`), the rate limit as its
 * service declares it (`rate-limit`: name, and per tier per_minute and setting),
 * the relation as the rule names it and its service declares it (`relation`:
 * `<key>.<name>`, scope_field, roles, when_set, refusal, acting_for_nobody).
 */
function ruleMembers(method: DescMethod, rule: Access): JsonObject {
  const members: JsonObject = { capabilities: rule.capabilities };
  const limit = declaredRateLimit(method, rule);
  if (limit) members["rate-limit"] = toJson(RateLimitSchema, limit, { useProtoFieldName: true });
  if (rule.relation) members.relation = relationMembers(method, rule.relation);
  const set = toJson(AccessSchema, rule, { useProtoFieldName: true }) as Record<string, JsonValue>;
  for (const field of AccessSchema.fields) {
    const value = set[field.name];
    if (value === undefined || ["alternatives", "cors", "rate_limit", "relation"].includes(field.name)) continue;
    // An enum's JSON is its value's proto name (`ACTOR_PLATFORM_STAFF`); its local name drops the prefix.
    const local = field.fieldKind === "enum" ? field.enum.values.find((each) => each.name === value) : undefined;
    members[kebab(field.name)] = local === undefined ? value : kebab(local.localName);
  }
  return members;
}

/** A rule's relation (`x-pf-relation`) with what its service declares of it: who holds it, who is refused how. */
function relationMembers(method: DescMethod, relation: RelationRule): JsonObject {
  const declared = getOption(method.parent, relationsOption).find((each) => each.name === relation.name);
  return {
    ...(toJson(RelationRuleSchema, relation, { useProtoFieldName: true }) as JsonObject),
    ...(declared && (toJson(RelationSchema, declared, { useProtoFieldName: true }) as JsonObject)),
    name: `${getOption(method.parent, service_key)}.${relation.name}`,
  };
}

function kebab(name: string): string {
  return name.toLowerCase().replace(/_/g, "-");
}

/** errors.problem@1 as sent: the Problem message with its extensions flattened into extra members. */
function problemSchema(components: SchemaComponents): JsonObject {
  const ref = components.message(ProblemSchema);
  const schema = components.schemas[componentName(ProblemSchema)] as {
    properties: JsonObject;
    additionalProperties?: boolean;
  };
  delete schema.properties.extensions;
  schema.additionalProperties = true;
  return ref;
}
