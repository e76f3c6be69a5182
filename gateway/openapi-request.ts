import type { DescMessage, JsonObject } from "@bufbuild/protobuf";
import { protoComments } from "../gen/pf/docs.js";
import type { Upload } from "../gen/pf/v1/options_pb.js";
import { routeAccessOf } from "../services/kit/auth/enforce.js";
import { routeFieldsOf } from "../services/kit/rpc/input.js";
import { servedAsWebSocket, type Binding } from "./bindings.js";
import { takesRawBytes } from "./bodies.js";
import type { FieldTarget } from "./fields.js";
import { exampleOf, heldMessage } from "./openapi-examples.js";
import { requestFields, type RequestFields } from "./request.js";
import { declaredRequired } from "./rule-schemas.js";
import { componentName, type SchemaComponents } from "./schemas.js";
import { uploadOf } from "./uploads.js";

/**
 * The request side of an operation: its path and query parameters, each
 * described by its field's proto comment, the headers it reads (a credential
 * its rules declare, a WebSocket's upgrade), and its body. The body's schema
 * leaves out the fields the path sets and, where routes share a request
 * message (request_fields), those this route does not read: the gateway
 * refuses a body naming either, so "Try it out" must not offer them. A path
 * parameter and a JSON body carry an example valid against their schema.
 */
export function requestOf(
  binding: Binding,
  components: SchemaComponents,
): { parameters: JsonObject[]; requestBody?: JsonObject } {
  const fields = requestFields(binding);
  const parameters: JsonObject[] = fields.path.map((target, index) => {
    const schema = components.field(target.field);
    const example = exampleOf(schema, components.schemas);
    const rest = binding.template.variables[index].rest && "The rest of the path; may contain slashes.";
    return {
      name: target.path,
      in: "path",
      required: true,
      ...describedAs(target, rest),
      schema,
      ...(example !== undefined && { example }),
    };
  });
  // Both spellings of a query parameter lead to one target: document it once, by its proto name; only those the route reads.
  const reads = routeFieldsOf(binding.method);
  for (const target of new Set(fields.query.values())) {
    if (reads && !reads.has(target.steps[0].name)) continue;
    // A map field takes one parameter per key (`facet.<key>=value`): documented as a pattern of names.
    parameters.push(
      target.map
        ? {
            name: `${target.path}.{key}`,
            in: "query",
            ...describedAs(target, `One parameter per key of ${target.path}: ${target.path}.<key>=<value>.`),
            schema: { type: "string" },
          }
        : {
            name: target.path,
            in: "query",
            // A top-level field its rules require (rule-schemas.ts); a nested one only within its parent.
            ...(target.steps.length === 1 && declaredRequired(target.field) && { required: true }),
            ...describedAs(target),
            schema: components.field(target.field),
          },
    );
  }
  parameters.push(...headerParameters(binding));
  if (binding.body === "") return { parameters };
  const upload = uploadOf(binding);
  const content = upload
    ? uploadContent(binding, upload, fields, components)
    : takesRawBytes(binding)
      ? { "*/*": { schema: BINARY } }
      : { "application/json": jsonBody(binding, fields.path, components) };
  return { parameters, requestBody: { required: true, content } };
}

export const BINARY = { type: "string", format: "binary" };

/** The headers an operation reads besides those of every route: its rules' credentials, a WebSocket's upgrade. */
function headerParameters(binding: Binding): JsonObject[] {
  const credentials = new Set(routeAccessOf(binding.method).rules.flatMap((rule) => rule.credentialHeaders));
  const parameters: JsonObject[] = [...credentials].map((name) => ({
    name,
    in: "header",
    description:
      "A credential the route reads itself (`x-pf-credential-headers`), taken from any caller: its handler checks it.",
    schema: { type: "string" },
  }));
  if (servedAsWebSocket(binding))
    parameters.push({
      name: "Upgrade",
      in: "header",
      required: true,
      description: "The route is a WebSocket: without the upgrade it answers 426.",
      schema: { type: "string", enum: ["websocket"] },
      example: "websocket",
    });
  return parameters;
}

/** A parameter's description: its field's proto comment, then what the parameter adds. */
function describedAs(target: FieldTarget, added?: string | false): JsonObject {
  const text = [protoComments[`${target.field.parent.typeName}.${target.field.name}`], added].filter(Boolean);
  return text.length > 0 ? { description: text.join(" ") } : {};
}

/**
 * An upload's body: a form with one file part (`many_files`: an array of them, in order), text fields before it
 * (those that are no query parameter, a message field's JSON text, among its properties), the raw file in a listed
 * type, or with `application/json` the first message alone, without the fields the path sets and the file's.
 */
function uploadContent(
  binding: Binding,
  { mediaTypes, manyFiles, nameField, typeField }: Upload,
  fields: RequestFields,
  components: SchemaComponents,
): JsonObject {
  const files: JsonObject = manyFiles ? { files: { type: "array", items: BINARY, minItems: 1 } } : { file: BINARY };
  const text: JsonObject = {};
  for (const target of new Set(fields.form.values()))
    if (!fields.query.has(target.path))
      text[target.path] = { type: "string", contentMediaType: "application/json", ...describedAs(target) };
  const form = { type: "object", properties: { ...text, ...files }, required: Object.keys(files) };
  const content: JsonObject = {};
  for (const type of mediaTypes) {
    if (type === "multipart/form-data") content[type] = { schema: form };
    else if (type !== "application/json") content[type] = { schema: BINARY };
    else {
      const left = [...fields.path.map((target) => target.path), binding.bodyField!.name, nameField, typeField];
      const schema = without(binding.method.input, new Set(left.filter(Boolean)), components);
      const example = exampleOf(schema, components.schemas, binding.method.input);
      content[type] = { schema, ...(example !== undefined && { example }) };
    }
  }
  return content;
}

/** A JSON body's schema, without the fields it may not name, and its example. */
function jsonBody(binding: Binding, path: readonly FieldTarget[], components: SchemaComponents): JsonObject {
  const { bodyField, method } = binding;
  const reads = routeFieldsOf(method);
  // Dotted paths from the body's top: the path's fields, and (body "*") the request's fields this route does not read.
  const left = bodyField
    ? path
        .filter((target) => target.steps[0] === bodyField)
        .map((target) => target.path.slice(bodyField.name.length + 1))
    : [
        ...path.map((target) => target.path),
        ...(reads ? method.input.fields.filter((field) => !reads.has(field.name)).map((field) => field.name) : []),
      ];
  const whole = bodyField ? components.field(bodyField) : components.message(method.input);
  // A path variable reaches into the body only through singular message fields.
  const trimmed = bodyField?.fieldKind === "message" ? bodyField.message : method.input;
  const schema = left.length > 0 ? without(trimmed, new Set(left), components) : whole;
  const example = exampleOf(schema, components.schemas, bodyField ? heldMessage(bodyField) : method.input);
  return { schema, ...(example !== undefined && { example }) };
}

/**
 * A message's schema inline without some of its fields (dotted paths reach
 * into message fields, inlined in turn): its component as made, so what it
 * declares of its fields (`required`, bounds) stays, less the fields left out.
 */
function without(message: DescMessage, left: ReadonlySet<string>, components: SchemaComponents): JsonObject {
  components.message(message);
  const component = components.schemas[componentName(message)];
  const properties: JsonObject = {};
  for (const [name, property] of Object.entries(component.properties as Record<string, JsonObject>)) {
    if (left.has(name)) continue;
    const inner = new Set(
      [...left].filter((path) => path.startsWith(`${name}.`)).map((path) => path.slice(name.length + 1)),
    );
    const field = message.fields.find((each) => each.name === name);
    const nested = field?.fieldKind === "message" ? field.message : undefined;
    properties[name] =
      inner.size > 0 && nested
        ? {
            ...without(nested, inner, components),
            ...(property.description !== undefined && { description: property.description }),
          }
        : property;
  }
  const required = Array.isArray(component.required)
    ? component.required.filter((name) => (name as string) in properties)
    : [];
  const narrowed: JsonObject = { ...component, properties };
  if (required.length > 0) narrowed.required = required;
  else delete narrowed.required;
  return narrowed;
}
