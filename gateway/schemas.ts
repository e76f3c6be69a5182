import {
  getOption,
  ScalarType,
  type DescEnum,
  type DescField,
  type DescMessage,
  type JsonObject,
} from "@bufbuild/protobuf";
import { isWrapperDesc } from "@bufbuild/protobuf/wkt";
import { protoComments } from "../gen/pf/docs.js";
import { schema as schemaId } from "../gen/pf/v1/options_pb.js";
import { idRuleOf } from "../services/kit/rpc/input.js";
import { itemRuleKeywords, requiredFields, ruleKeywords } from "./rule-schemas.js";

/**
 * The proto comment of a pf element (by full name) as an OpenAPI summary and
 * description; `fallback` is the summary of an undocumented one.
 */
export function described(name: string, fallback?: string): JsonObject {
  const comment = protoComments[name];
  if (!comment) return fallback ? { summary: fallback } : {};
  // The first sentence whole ("Moderation: resolves an open flag." says more than its label), for callers:
  // whether the spec shows the route is x-pf-designed's to say.
  const sentence = /^.*?\.(?=\s|$)/.exec(comment)?.[0] ?? comment;
  return { summary: sentence.replace(/\.$/, "").replace(/ \(designed\)/, ""), description: comment };
}

/** The proto comment of a pf element as a JSON Schema description. */
function description(name: string): JsonObject {
  const comment = protoComments[name];
  return comment ? { description: comment } : {};
}

/**
 * A message's OpenAPI component name: its spec schema id with the version as
 * `.v<n>` (`tips.paid-request@1` is `tips.paid-request.v1`: OpenAPI allows only
 * `[a-zA-Z0-9._-]` in component names), else its full name. The id itself is
 * the component's `x-pf-schema`.
 */
export function componentName(message: DescMessage): string {
  const id = getOption(message, schemaId);
  return id ? id.replace(/@(\d+)$/, ".v$1") : message.typeName;
}

/** What a `$ref` to a component starts with: the component's name follows. */
export const REF = "#/components/schemas/";

/** Well-known types, inlined as the proto JSON mapping writes them. */
const WELL_KNOWN: Record<string, JsonObject> = {
  "google.protobuf.Timestamp": { type: "string", format: "date-time" },
  "google.protobuf.Duration": { type: "string", pattern: "^-?[0-9]+(\\.[0-9]+)?s$" },
  "google.protobuf.FieldMask": { type: "string" },
  "google.protobuf.Struct": { type: "object", additionalProperties: true },
  "google.protobuf.Value": {},
  "google.protobuf.ListValue": { type: "array" },
  "google.protobuf.Any": {
    type: "object",
    properties: { "@type": { type: "string" } },
    required: ["@type"],
    additionalProperties: true,
  },
};

/**
 * JSON Schemas of messages in the proto JSON mapping with proto field names,
 * collected as components: referencing a message adds it (and what it
 * references) once.
 */
export class SchemaComponents {
  readonly schemas: Record<string, JsonObject> = {};
  /** The message each component was made of: two messages never share a name. */
  private readonly named = new Map<string, DescMessage>();

  /** A `$ref` to the message's component (or the inline schema of a well-known type). */
  message(message: DescMessage): JsonObject {
    const known = WELL_KNOWN[message.typeName];
    if (known) return known;
    if (isWrapperDesc(message)) return scalarSchema(message.fields[0].scalar);
    const name = componentName(message);
    const named = this.named.get(name);
    if (named !== undefined && named !== message)
      throw new Error(`${named.typeName} and ${message.typeName} would both be the component ${name}`);
    if (named === undefined) {
      this.named.set(name, message);
      const properties: JsonObject = {};
      const id = getOption(message, schemaId);
      this.schemas[name] = {
        type: "object",
        title: message.typeName,
        ...(id && { "x-pf-schema": id }),
        ...description(message.typeName),
        properties,
        ...requiredOf(message),
      };
      for (const field of message.fields)
        properties[field.name] = { ...this.field(field), ...description(`${message.typeName}.${field.name}`) };
    }
    return { $ref: REF + name };
  }

  field(field: DescField): JsonObject {
    switch (field.fieldKind) {
      case "scalar":
        return { ...scalarSchema(field.scalar), ...idShape(field), ...ruleKeywords(field) };
      case "enum":
        return { ...enumSchema(field.enum), ...ruleKeywords(field) };
      case "message":
        return this.message(field.message);
      case "list":
        return {
          type: "array",
          items: { ...this.element(field), ...idShape(field), ...itemRuleKeywords(field) },
          ...ruleKeywords(field),
        };
      case "map":
        return { type: "object", additionalProperties: this.element(field) };
    }
  }

  /** The schema of one list item or map value. */
  private element(field: DescField & { fieldKind: "list" | "map" }): JsonObject {
    const kind = field.fieldKind === "list" ? field.listKind : field.mapKind;
    if (kind === "enum") return enumSchema(field.enum!);
    if (kind === "message") return this.message(field.message!);
    return scalarSchema(field.scalar!);
  }
}

/** The object's `required`: the fields declaring `(pf.v1.rules).required` (rule-schemas.ts). */
function requiredOf(message: DescMessage): JsonObject {
  const required = requiredFields(message);
  return required.length > 0 ? { required } : {};
}

/** The shape of an id the platform made (id_prefix), which the input guard holds requests to. */
function idShape(field: DescField): JsonObject {
  const rule = idRuleOf(field);
  return rule?.pattern ? { pattern: rule.pattern.source, maxLength: rule.maxLength } : {};
}

function enumSchema(descEnum: DescEnum): JsonObject {
  return { type: "string", enum: descEnum.values.map((value) => value.name) };
}

function scalarSchema(type: ScalarType): JsonObject {
  switch (type) {
    case ScalarType.STRING:
      return { type: "string" };
    case ScalarType.BYTES:
      return { type: "string", contentEncoding: "base64" };
    case ScalarType.BOOL:
      return { type: "boolean" };
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return { type: "integer", format: "int32" };
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return { type: "integer", minimum: 0, maximum: 4294967295 };
    // 64-bit integers are written as strings (JSON numbers lose precision) and read from either.
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return { type: ["string", "integer"], format: "int64" };
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return { type: ["string", "integer"], format: "uint64" };
    case ScalarType.FLOAT:
      return { type: "number", format: "float" };
    case ScalarType.DOUBLE:
      return { type: "number", format: "double" };
  }
}
