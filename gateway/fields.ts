import { ScalarType, type DescField, type DescMessage, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import { isWrapperDesc } from "@bufbuild/protobuf/wkt";
import { invalid } from "../services/kit/handler/problem.js";
import { parseJsonText } from "./json-text.js";

/**
 * A request field that a path variable or query parameter sets. Values are
 * turned into the proto JSON the field takes; fromJson then validates them
 * (range, enum names, timestamps) and names the field when they are wrong.
 */
export interface FieldTarget {
  /** Dotted proto name from the request message (`page.limit`). */
  readonly path: string;
  /** Each field from the request message down to the target. */
  readonly steps: readonly DescField[];
  /** The target field itself (the last step). */
  readonly field: DescField;
  readonly repeated: boolean;
  /** A map field with string keys: its parameters are `<path>.<key>` (`facet.merchant=acme`), one per key. */
  readonly map?: boolean;
  /** One value's text as proto JSON (a map's: one value's). */
  readonly convert: (text: string) => JsonValue;
}

/**
 * Query parameters by name: both the dotted proto name and the dotted lowerCamel name. A map field is
 * found under its name and `.*` (MAP_KEYS): each of its parameters adds one key.
 */
export type QueryTargets = ReadonlyMap<string, FieldTarget>;

/** What follows a map field's name among the query targets: any key. */
export const MAP_KEYS = ".*";

/** Nesting followed for dotted query names; deeper fields go in a body. */
const MAX_DEPTH = 4;

/** The field a path variable names; a build error when it is not a singular scalar-like field. */
export function pathTarget(message: DescMessage, path: string): FieldTarget {
  const steps: DescField[] = [];
  let current: DescMessage | undefined = message;
  for (const name of path.split(".")) {
    const field: DescField | undefined = current?.fields.find((f) => f.name === name);
    if (!field) throw new Error(`${message.typeName} has no field ${path}`);
    steps.push(field);
    current = field.fieldKind === "message" ? field.message : undefined;
  }
  const target = targetOf(steps);
  if (!target || target.repeated) throw new Error(`${message.typeName}.${path} cannot be bound to a path variable`);
  return target;
}

/**
 * Every field a query parameter may set: scalar-like fields, repeated ones
 * included, reached through singular message fields, except the fields under
 * `excluded` dotted paths (those the path or the body sets).
 */
export function queryTargets(message: DescMessage, excluded: ReadonlySet<string>): QueryTargets {
  const targets = new Map<string, FieldTarget>();
  const walk = (current: DescMessage, parents: DescField[], seen: ReadonlySet<string>) => {
    for (const field of current.fields) {
      const steps = [...parents, field];
      const path = steps.map((s) => s.name).join(".");
      if (excluded.has(path)) continue;
      const target = targetOf(steps) ?? mapTargetOf(steps);
      if (target) {
        const suffix = target.map ? MAP_KEYS : "";
        targets.set(path + suffix, target);
        targets.set(steps.map((s) => s.jsonName).join(".") + suffix, target);
      } else if (
        field.fieldKind === "message" &&
        !field.message.typeName.startsWith("google.protobuf.") &&
        !seen.has(field.message.typeName) &&
        steps.length < MAX_DEPTH
      ) {
        walk(field.message, steps, new Set([...seen, field.message.typeName]));
      }
    }
  };
  walk(message, [], new Set([message.typeName]));
  return targets;
}

/**
 * The fields an upload's form text fields set besides the query's: top-level message fields no text converter
 * sets (tools' google.protobuf.Struct `input`), each field's text its proto JSON. Text that is not JSON is 400
 * naming the field (json-text.ts); JSON the field does not take is refused by fromJson, naming it.
 */
export function jsonTextTargets(message: DescMessage, excluded: ReadonlySet<string>): QueryTargets {
  const targets = new Map<string, FieldTarget>();
  for (const field of message.fields) {
    if (field.fieldKind !== "message" || excluded.has(field.name) || converterOf(field)) continue;
    const convert = (text: string) => parseJsonText(text, field.name);
    const target: FieldTarget = { path: field.name, steps: [field], field, repeated: false, convert };
    targets.set(field.name, target);
    targets.set(field.jsonName, target);
  }
  return targets;
}

/**
 * Sets each query parameter's value on the request JSON; unknown or repeated-when-single parameters are refused,
 * and so is a parameter setting a field the body set already (an upload's JSON body): given twice.
 */
export function applyQuery(
  json: JsonObject,
  targets: QueryTargets,
  query: Record<string, string | string[] | undefined>,
): void {
  const given = new Set<FieldTarget>();
  const keys = new Set<string>();
  for (const name in query) {
    const target = targets.get(name);
    if (!target) {
      applyMapEntry(json, targets, name, query[name] as string | string[], keys);
      continue;
    }
    // Both spellings of one field (`local_id` and `localId`) are one field given twice.
    if (given.has(target))
      throw invalid(target.path, `Query parameter ${target.path} is given twice, under both its spellings.`);
    given.add(target);
    if (valueAt(json, target) !== undefined)
      throw invalid(target.path, `Field ${target.path} is given both in the body and as a parameter.`);
    const value = query[name] as string | string[];
    if (target.repeated) {
      setField(json, target, Array.isArray(value) ? value.map(target.convert) : [target.convert(value)]);
    } else if (Array.isArray(value)) {
      throw invalid(name, `Query parameter ${name} takes one value, got ${value.length}.`);
    } else {
      setField(json, target, target.convert(value));
    }
  }
}

/**
 * A parameter `<map>.<key>=value` of a map field (the longest map name that
 * opens it): one key of the map, given once under either spelling.
 */
function applyMapEntry(
  json: JsonObject,
  targets: QueryTargets,
  name: string,
  value: string | string[],
  keys: Set<string>,
): void {
  for (let dot = name.lastIndexOf("."); dot > 0; dot = name.lastIndexOf(".", dot - 1)) {
    const target = targets.get(name.slice(0, dot) + MAP_KEYS);
    if (!target) continue;
    const key = name.slice(dot + 1);
    if (key === "") throw invalid(name, `Query parameter ${name} names no key of ${target.path}.`);
    if (Array.isArray(value)) throw invalid(name, `Query parameter ${name} takes one value, got ${value.length}.`);
    if (keys.has(`${target.path}.${key}`))
      throw invalid(name, `Query parameter ${target.path}.${key} is given twice, under both its spellings.`);
    keys.add(`${target.path}.${key}`);
    const entries = valueAt(json, target);
    const map = entries !== null && typeof entries === "object" && !Array.isArray(entries) ? entries : {};
    setField(json, target, { ...map, [key]: target.convert(value) });
    return;
  }
  throw invalid(name, `Query parameter ${name} is not accepted by this route.`);
}

/**
 * Sets a field in the request JSON, creating the messages on the way. A value
 * already there under the lowerCamel spelling is moved to the proto name, so
 * the path's value replaces a body's instead of clashing with it.
 */
export function setField(json: JsonObject, target: FieldTarget, value: JsonValue): void {
  let node = json;
  const last = target.steps.length - 1;
  for (let i = 0; i < last; i++) {
    const step = target.steps[i];
    let child = own(node, step);
    if (child === undefined || child === null) {
      child = {};
      node[step.name] = child;
    } else if (typeof child !== "object" || Array.isArray(child)) {
      throw invalid(
        target.path,
        `Field ${target.steps
          .slice(0, i + 1)
          .map((s) => s.name)
          .join(".")} must be an object.`,
      );
    }
    node = child;
  }
  own(node, target.steps[last]);
  node[target.steps[last].name] = value;
}

/**
 * Sets a path variable's field. A body naming the same field with another value is refused (400 naming it), never
 * overridden: `PATCH /instruments/A {"symbol": "B"}` may mean a rename the route does not do.
 */
export function setPathField(json: JsonObject, target: FieldTarget, value: JsonValue): void {
  const sent = valueAt(json, target);
  if (sent !== undefined && sent !== null && textOf(sent) !== textOf(value))
    throw invalid(target.path, `Field ${target.path} is ${textOf(value)} in the path; the body names another value.`);
  setField(json, target, value);
}

/** A JSON value as text: a path variable's scalar as the path wrote it (`5` and `"5"` alike for an int64). */
const textOf = (json: JsonValue) => (typeof json === "object" ? JSON.stringify(json) : String(json));

/** The value `json` holds at a target (either spelling), or undefined. */
function valueAt(json: JsonObject, target: FieldTarget): JsonValue | undefined {
  let node: JsonValue | undefined = json;
  for (const step of target.steps) {
    if (node === undefined || node === null || typeof node !== "object" || Array.isArray(node)) return undefined;
    node = own(node, step);
  }
  return node;
}

function own(node: JsonObject, step: DescField): JsonValue | undefined {
  if (step.jsonName !== step.name && Object.hasOwn(node, step.jsonName)) {
    node[step.name] = node[step.jsonName];
    delete node[step.jsonName];
  }
  return Object.hasOwn(node, step.name) ? node[step.name] : undefined;
}

function targetOf(steps: DescField[]): FieldTarget | undefined {
  const leaf = steps[steps.length - 1];
  const convert = converterOf(leaf);
  if (!convert) return undefined;
  return {
    path: steps.map((s) => s.name).join("."),
    steps,
    field: leaf,
    repeated: leaf.fieldKind === "list",
    convert,
  };
}

/** A map field with string keys and scalar-like values, set one key per query parameter. */
function mapTargetOf(steps: DescField[]): FieldTarget | undefined {
  const leaf = steps[steps.length - 1];
  if (leaf.fieldKind !== "map" || leaf.mapKey !== ScalarType.STRING) return undefined;
  const convert =
    leaf.mapKind === "scalar"
      ? scalarConverter(leaf.scalar)
      : leaf.mapKind === "enum"
        ? enumText
        : TEXT_MESSAGES.has(leaf.message.typeName)
          ? sameText
          : undefined;
  if (!convert) return undefined;
  return { path: steps.map((s) => s.name).join("."), steps, field: leaf, repeated: false, map: true, convert };
}

/** How one value's text becomes JSON for a field; undefined for fields text cannot set (maps, plain messages). */
function converterOf(field: DescField): ((text: string) => JsonValue) | undefined {
  const kind = field.fieldKind === "list" ? field.listKind : field.fieldKind;
  switch (kind) {
    case "scalar":
      return scalarConverter((field as { scalar: ScalarType }).scalar);
    case "enum":
      return enumText;
    case "message": {
      const message = (field as { message: DescMessage }).message;
      if (isWrapperDesc(message)) return scalarConverter(message.fields[0].scalar);
      return TEXT_MESSAGES.has(message.typeName) ? sameText : undefined;
    }
    default:
      return undefined;
  }
}

/** Well-known messages whose JSON is a string. */
const TEXT_MESSAGES = new Set(["google.protobuf.Timestamp", "google.protobuf.Duration", "google.protobuf.FieldMask"]);

const NUMBER = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

function scalarConverter(type: ScalarType | undefined): (text: string) => JsonValue {
  switch (type) {
    case ScalarType.BOOL:
      return boolText;
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
    case ScalarType.FLOAT:
    case ScalarType.DOUBLE:
      return numberText;
    default:
      // Strings, bytes (base64) and 64-bit integers, which proto JSON writes as strings to keep their precision.
      return sameText;
  }
}

const sameText = (text: string): JsonValue => text;
// Anything that is not a number stays text, so fromJson refuses it naming the field.
const numberText = (text: string): JsonValue => (NUMBER.test(text) ? Number(text) : text);
const enumText = (text: string): JsonValue => (/^-?\d+$/.test(text) ? Number(text) : text);
// `?all=1` is how the spec writes a flag.
const boolText = (text: string): JsonValue =>
  text === "true" || text === "1" ? true : text === "false" || text === "0" ? false : text;
