import type { DescField, DescMessage, JsonObject, JsonValue } from "@bufbuild/protobuf";
import { patternSample } from "./pattern-sample.js";
import { REF } from "./schemas.js";

/**
 * Examples built from the JSON Schemas of a document, valid against them: what
 * Swagger UI's "Try it out" starts from, so its default body is one the
 * gateway takes. A schema's own `example`, `const` or `default` comes first
 * (of `anyOf`, the last branch's);
 * then every property it lists, one member per oneof (the schema cannot say
 * which fields a oneof joins; the message can), values within the schema's
 * keywords: an enum's first value other than `…_UNSPECIFIED`, a string of its
 * format or pattern between its lengths, a number between its bounds, one item
 * of a list, an empty map. Stable: no clock, no randomness.
 */
export function exampleOf(
  schema: JsonObject,
  components: Readonly<Record<string, JsonObject>>,
  message?: DescMessage,
): JsonValue | undefined {
  return valueOf(schema, { components, open: new Set() }, message);
}

interface Walk {
  readonly components: Readonly<Record<string, JsonObject>>;
  /** The components being filled, outermost first: a message that holds itself stops there. */
  readonly open: Set<string>;
}

function valueOf(schema: JsonObject, walk: Walk, message: DescMessage | undefined): JsonValue | undefined {
  const ref = typeof schema.$ref === "string" && schema.$ref.startsWith(REF) ? schema.$ref.slice(REF.length) : "";
  if (ref !== "") {
    if (walk.open.has(ref) || !(ref in walk.components)) return undefined;
    walk.open.add(ref);
    try {
      return valueOf({ ...walk.components[ref], ...schema, $ref: null }, walk, message);
    } finally {
      walk.open.delete(ref);
    }
  }
  if (Array.isArray(schema.anyOf)) {
    // A value of the last branch that yields one (a zero value skipped by the rules is the first: less telling).
    const { anyOf, ...rest } = schema;
    for (const branch of [...(anyOf as JsonObject[])].reverse()) {
      const value = valueOf({ ...rest, ...branch }, walk, message);
      if (value !== undefined) return value;
    }
    return undefined;
  }
  if ("example" in schema) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ("const" in schema) return schema.const;
  if ("default" in schema) return schema.default;
  if (Array.isArray(schema.enum))
    return schema.enum.find((value) => typeof value !== "string" || !value.endsWith("_UNSPECIFIED")) ?? schema.enum[0];
  switch (Array.isArray(schema.type) ? schema.type[0] : schema.type) {
    case "object":
      return schema.properties ? objectOf(schema, walk, message) : {};
    case "array":
      return listOf(schema, walk, message);
    case "string":
      return textOf(schema);
    case "integer":
    case "number":
      return numberOf(schema);
    case "boolean":
      return false;
    default:
      // No type (google.protobuf.Value): any JSON.
      return {};
  }
}

/** Every property with an example, a oneof's required member (else its first) and no other member of it. */
function objectOf(schema: JsonObject, walk: Walk, message: DescMessage | undefined): JsonObject {
  const properties = schema.properties as Record<string, JsonObject>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const fields = new Map(message?.fields.map((field) => [field.name, field]));
  const taken = new Set<string>();
  for (const name of Object.keys(properties)) {
    const oneof = fields.get(name)?.oneof;
    if (oneof && required.has(name)) taken.add(oneof.name);
  }
  const example: JsonObject = {};
  for (const [name, property] of Object.entries(properties)) {
    const field = fields.get(name);
    if (field?.oneof && !required.has(name)) {
      if (taken.has(field.oneof.name)) continue;
      taken.add(field.oneof.name);
    }
    const value = valueOf(property, walk, field && heldMessage(field));
    if (value !== undefined) example[name] = value;
    else if (field?.oneof && !required.has(name)) taken.delete(field.oneof.name);
  }
  return example;
}

/** The message a field holds, or whose items or values it holds. */
export function heldMessage(field: DescField): DescMessage | undefined {
  if (field.fieldKind === "message") return field.message;
  if (field.fieldKind === "list" && field.listKind === "message") return field.message;
  if (field.fieldKind === "map" && field.mapKind === "message") return field.message;
  return undefined;
}

function listOf(schema: JsonObject, walk: Walk, message: DescMessage | undefined): JsonValue[] | undefined {
  const count = Math.min(Math.max(1, number(schema.minItems) ?? 0), number(schema.maxItems) ?? Infinity);
  if (count === 0) return [];
  const item = valueOf((schema.items as JsonObject | undefined) ?? {}, walk, message);
  return item === undefined ? undefined : Array.from({ length: count }, () => item);
}

const FORMATS: Record<string, string> = {
  "date-time": "2030-01-01T00:00:00Z",
  date: "2030-01-01",
  time: "00:00:00Z",
  uri: "https://example.com/",
  url: "https://example.com/",
  email: "person@example.com",
  hostname: "example.com",
  ipv4: "192.0.2.1",
  ipv6: "2001:db8::1",
  uuid: "00000000-0000-4000-8000-000000000000",
};

/** A string of the schema's format or pattern, else a word, as long as its lengths allow; undefined when none fits. */
function textOf(schema: JsonObject): string | undefined {
  const format = typeof schema.format === "string" ? schema.format : "";
  if (format in FORMATS) return FORMATS[format];
  // 64-bit integers are strings in proto JSON.
  if (/^u?int(32|64)$/.test(format)) return String(numberOf(schema));
  const min = number(schema.minLength) ?? 0;
  const max = number(schema.maxLength) ?? Infinity;
  const fits = (text: string) => text.length >= min && text.length <= max;
  if (typeof schema.pattern === "string") {
    const sample = patternSample(schema.pattern);
    return sample !== undefined && fits(sample) ? sample : undefined;
  }
  if (schema.contentEncoding === "base64") return "AAAA".repeat(Math.ceil(min / 4));
  const text = "example".padEnd(min, "x").slice(0, max);
  return fits(text) ? text : undefined;
}

/** 0 moved into the schema's bounds, then up to its multipleOf; a whole number for an integer. */
function numberOf(schema: JsonObject): number {
  let value = 0;
  const minimum = number(schema.minimum);
  const maximum = number(schema.maximum);
  const above = number(schema.exclusiveMinimum);
  const below = number(schema.exclusiveMaximum);
  if (minimum !== undefined && value < minimum) value = minimum;
  if (above !== undefined && value <= above) value = above + 1;
  if (maximum !== undefined && value > maximum) value = maximum;
  if (below !== undefined && value >= below) value = below - 1;
  const step = number(schema.multipleOf);
  if (step) value = Math.ceil(value / step) * step;
  return schema.type === "number" ? value : Math.ceil(value);
}

function number(value: JsonValue | undefined): number | undefined {
  return typeof value === "number" ? value : undefined;
}
