import {
  getOption,
  toJson,
  type DescMethod,
  type DescService,
  type JsonObject,
  type JsonValue,
} from "@bufbuild/protobuf";
import { protoComments } from "../gen/pf/docs.js";
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
  Visibility,
} from "../gen/pf/v1/options_pb.js";
import { admitsAnonymous, routeAccessOf, type RouteAccess } from "../services/kit/auth/enforce.js";
import { routeFieldsOf } from "../services/kit/rpc/input.js";
import { declaredRateLimit } from "../services/kit/rpc/rate-limits.js";
import { rpcName, type Binding } from "./bindings.js";
import { takesRawBytes } from "./bodies.js";
import { answersBytes } from "./bytes.js";
import { corsKind } from "./cors.js";
import { problemResponses, routeProblems } from "./openapi-problems.js";
import { PROBLEM_CONTENT_TYPE } from "./problems.js";
import { EVENT_STREAM_CONTENT_TYPE } from "./sse.js";
import { requestFields } from "./request.js";
import { componentName, described, SchemaComponents } from "./schemas.js";
import { openApiPath } from "./template.js";
import { uploadOf } from "./uploads.js";

export interface DocumentScope {
  readonly title: string;
  /** The base path of one service (`/network`): the document's server, its paths relative to it. Unset: paths carry `/<key>`. */
  readonly basePath?: string;
}

/**
 * OpenAPI 3.1 of the bindings: one tag per service key, one operation per
 * binding, components named by schema id, the access of each RPC as x-pf-*
 * members and the problems it answers as responses.
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
    tags: serviceTags(bindings),
    paths,
    components: {
      schemas: components.schemas,
      securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
    },
  };
}

/**
 * One tag per service key, in the bindings' order, described by the proto
 * comments of its services that have a route in the document (an internal
 * service's comment stays out of the public document).
 */
function serviceTags(bindings: readonly Binding[]): JsonObject[] {
  const services = new Map<string, Set<DescService>>();
  for (const { key, service } of bindings) services.set(key, (services.get(key) ?? new Set()).add(service));
  return [...services].map(([key, described]) => {
    const comments = [...described].flatMap((service) => {
      const comment = protoComments[service.typeName];
      return comment ? [`**${service.name}**: ${comment}`] : [];
    });
    return { name: key, ...(comments.length > 0 && { description: comments.join("\n\n") }) };
  });
}

/**
 * Whether a route is in the public document (served to callers without a
 * service token): one some rule opens to the public or to first-party callers.
 * Internal and partner routes are documented only to services.
 */
export function publiclyDocumented(binding: Binding): boolean {
  return routeAccessOf(binding.method).rules.some(
    (rule) => rule.visibility === Visibility.PUBLIC || rule.visibility === Visibility.FIRST_PARTY,
  );
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
  // Both spellings of a query parameter lead to one target: document it once, by its proto name; only those the route reads.
  const reads = routeFieldsOf(method);
  for (const target of new Set(fields.query.values())) {
    if (reads && !reads.has(target.steps[0].name)) continue;
    if (target.map) {
      // A map field takes one parameter per key (`facet.<key>=value`): documented as a pattern of names.
      parameters.push({
        name: `${target.path}.{key}`,
        in: "query",
        description: `One parameter per key of ${target.path}: ${target.path}.<key>=<value>.`,
        schema: { type: "string" },
      });
      continue;
    }
    parameters.push({ name: target.path, in: "query", schema: components.field(target.field) });
  }
  const input = binding.bodyField ? components.field(binding.bodyField) : components.message(method.input);
  const output = binding.responseField ? components.field(binding.responseField) : components.message(method.output);
  const access = routeAccessOf(method);
  return {
    operationId: rpcName(method),
    ...described(`${method.parent.typeName}.${method.name}`, method.name),
    tags: [binding.key],
    parameters,
    ...(binding.body !== "" && {
      requestBody: {
        required: true,
        content: uploadOf(binding)
          ? uploadContent(uploadOf(binding)!.mediaTypes)
          : takesRawBytes(binding)
            ? { "*/*": { schema: BINARY } }
            : { "application/json": { schema: input } },
      },
    }),
    ...(uploadOf(binding) && { "x-pf-max-bytes": Number(uploadOf(binding)!.maxBytes) }),
    responses: {
      ...(answersBytes(binding)
        ? byteResponses(getOption(method, successStatuses), components.message(method.output))
        : method.methodKind === "server_streaming"
          ? eventStreamResponse(output)
          : successResponses(getOption(method, successStatuses), output)),
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

/** Whether a rule admits callers without a token, as enforcement reads it: public or first-party, with `anonymous`. */
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

const BINARY = { type: "string", format: "binary" };

/** An upload's body: a form with one file part (text fields before it), or the raw file in a listed type. */
function uploadContent(mediaTypes: readonly string[]): JsonObject {
  const content: JsonObject = {};
  for (const type of mediaTypes)
    content[type] =
      type === "multipart/form-data"
        ? { schema: { type: "object", properties: { file: BINARY }, required: ["file"] } }
        : { schema: BINARY };
  return content;
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
