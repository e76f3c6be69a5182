import { getOption, toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { ProblemSchema } from "../gen/pf/v1/problem_pb.js";
import { STATUS_CODES } from "node:http";
import { access as accessOption, type Access, AccessSchema, success_statuses as successStatuses, Visibility } from "../gen/pf/v1/options_pb.js";
import { rpcName, type Binding } from "./bindings.js";
import { takesRawBytes } from "./bodies.js";
import { PROBLEM_CONTENT_TYPE } from "./problems.js";
import { EVENT_STREAM_CONTENT_TYPE } from "./sse.js";
import { requestFields } from "./request.js";
import { componentName, described, SchemaComponents } from "./schemas.js";
import { openApiPath } from "./template.js";

export interface DocumentScope {
  readonly title: string;
  /** The base path of one service (`/network`): the document's server, its paths relative to it. Unset: paths carry `/<key>`. */
  readonly basePath?: string;
}

/**
 * OpenAPI 3.1 of the bindings: one operation per binding, components named by
 * schema id, and the access rule of each RPC as x-pf-* members.
 */
export function openApiDocument(bindings: readonly Binding[], scope: DocumentScope): JsonObject {
  const components = new SchemaComponents();
  const problem = problemSchema(components);
  const paths: Record<string, JsonObject> = {};
  for (const binding of bindings) {
    const path = (scope.basePath === undefined ? `/${binding.key}` : "") + openApiPath(binding.template);
    paths[path] ??= {};
    paths[path][binding.verb.toLowerCase()] = operation(binding, components, problem);
  }
  return {
    openapi: "3.1.0",
    info: { title: scope.title, version: "v1" },
    ...(scope.basePath !== undefined && { servers: [{ url: scope.basePath }] }),
    paths,
    components: {
      schemas: components.schemas,
      securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
    },
  };
}

function operation(binding: Binding, components: SchemaComponents, problem: JsonObject): JsonObject {
  const { method } = binding;
  const fields = requestFields(binding);
  const parameters: JsonObject[] = fields.path.map((target, index) => ({
    name: target.path,
    in: "path",
    required: true,
    schema: components.field(target.field),
    ...(binding.template.variables[index].rest && { description: "The rest of the path; may contain slashes." }),
  }));
  // Both spellings of a query parameter lead to one target: document it once, by its proto name.
  for (const target of new Set(fields.query.values())) {
    parameters.push({ name: target.path, in: "query", schema: components.field(target.field) });
  }
  const input = binding.bodyField ? components.field(binding.bodyField) : components.message(method.input);
  const output = binding.responseField ? components.field(binding.responseField) : components.message(method.output);
  const rule = getOption(method, accessOption);
  return {
    operationId: rpcName(method),
    ...described(`${method.parent.typeName}.${method.name}`, method.name),
    tags: [binding.key],
    parameters,
    ...(binding.body !== "" && {
      requestBody: {
        required: true,
        content: takesRawBytes(binding) ? { "*/*": { schema: { type: "string", format: "binary" } } } : { "application/json": { schema: input } },
      },
    }),
    responses: {
      ...(method.methodKind === "server_streaming" ? eventStreamResponse(output) : successResponses(getOption(method, successStatuses), output)),
      default: { description: "Problem", content: { [PROBLEM_CONTENT_TYPE]: { schema: problem } } },
    },
    ...(!(rule.anonymous && rule.visibility === Visibility.PUBLIC) && { security: [{ bearer: [] }] }),
    ...accessMembers(rule),
  };
}

/** The statuses a success answers with (200 unless the RPC says otherwise); 204 and 304 carry no body. */
function successResponses(statuses: readonly number[], output: JsonObject): JsonObject {
  const responses: JsonObject = {};
  for (const status of statuses.length > 0 ? statuses : [200]) {
    const description = STATUS_CODES[status] ?? "Success";
    responses[status] = status === 204 || status === 304 ? { description } : { description, content: { "application/json": { schema: output } } };
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
      description: "An event stream: each event's data is one message as JSON; id: and event: as the gateway README says.",
      content: { [EVENT_STREAM_CONTENT_TYPE]: { schema: { type: "string" }, "x-pf-event-data": output } },
    },
  };
}

/** The access rule as x-pf-* members: capabilities, visibility, and each special rule that is set. */
function accessMembers(rule: Access): JsonObject {
  const members: JsonObject = { "x-pf-capabilities": rule.capabilities };
  if (rule.visibility !== Visibility.UNSPECIFIED) {
    members["x-pf-visibility"] = Visibility[rule.visibility].toLowerCase().replace(/_/g, "-");
  }
  // toJson leaves out what is unset, so only the rules that apply appear.
  const set = toJson(AccessSchema, rule, { useProtoFieldName: true }) as Record<string, JsonValue>;
  for (const [name, value] of Object.entries(set)) {
    if (name !== "capabilities" && name !== "visibility") members[`x-pf-${name.replace(/_/g, "-")}`] = value;
  }
  return members;
}

/** errors.problem@1 as sent: the Problem message with its extensions flattened into extra members. */
function problemSchema(components: SchemaComponents): JsonObject {
  const ref = components.message(ProblemSchema);
  const schema = components.schemas[componentName(ProblemSchema)] as { properties: JsonObject; additionalProperties?: boolean };
  delete schema.properties.extensions;
  schema.additionalProperties = true;
  return ref;
}
