import {
  fromJson,
  type DescMessage,
  type JsonObject,
  type JsonValue,
  type Message,
  type Registry,
} from "@bufbuild/protobuf";
import { hasCustomJsonRepresentation } from "@bufbuild/protobuf/wkt";
import { invalid } from "../services/kit/handler/problem.js";

/** fromJson, with its errors as 400 request.invalid problems naming the field by its dotted path. */
export function decode(schema: DescMessage, json: JsonObject, registry: Registry): Message {
  try {
    return fromJson(schema, json, { registry });
  } catch (error) {
    const field = failingField(schema, json, registry) ?? "body";
    const reason = (error as Error).message.replace(/^cannot decode .*? from JSON:? ?/, "");
    if (/^key ".*" is unknown$/.test(reason)) throw invalid(field, `Field ${field} is not part of this request.`);
    throw invalid(field, `Field ${field} is invalid: ${reason}.`);
  }
}

/**
 * Which field made fromJson fail: its errors name the message but not always
 * the field (a bad timestamp, an unknown nested key), so on failure each
 * member is decoded alone, descending into nested messages and list items.
 */
function failingField(schema: DescMessage, json: JsonObject, registry: Registry): string | undefined {
  for (const [key, value] of Object.entries(json)) {
    if (decodes(schema, { [key]: value }, registry)) continue;
    const field = schema.fields.find((f) => f.name === key || f.jsonName === key);
    if (!field) return key;
    const message =
      field.fieldKind === "message" || (field.fieldKind === "list" && field.listKind === "message")
        ? field.message
        : undefined;
    if (!message || hasCustomJsonRepresentation(message)) return field.name;
    if (field.fieldKind === "list" && Array.isArray(value)) {
      const index = value.findIndex((item) => isObject(item) && !decodes(message, item, registry));
      const inner = index === -1 ? undefined : failingField(message, value[index] as JsonObject, registry);
      return index === -1 ? field.name : `${field.name}[${index}]${inner ? `.${inner}` : ""}`;
    }
    const inner = isObject(value) ? failingField(message, value, registry) : undefined;
    return inner ? `${field.name}.${inner}` : field.name;
  }
  return undefined;
}

function decodes(schema: DescMessage, json: JsonObject, registry: Registry): boolean {
  try {
    fromJson(schema, json, { registry });
    return true;
  } catch {
    return false;
  }
}

function isObject(value: JsonValue): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
