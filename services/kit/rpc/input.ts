import {
  getOption,
  hasOption,
  isFieldSet,
  ScalarType,
  type DescField,
  type DescMessage,
  type DescMethod,
  type Message,
} from "@bufbuild/protobuf";
import { reflect, type ReflectMessage } from "@bufbuild/protobuf/reflect";
import type { Interceptor } from "@connectrpc/connect";
import { id_prefix as idPrefix, request_fields as requestFields } from "../../../gen/pf/v1/options_pb.js";
import { FOREIGN_ID_MAX, ID_BODY_MAX, idPattern } from "../handler/ids.js";
import { invalid } from "../handler/problem.js";

/**
 * Input no service can store or answer with, refused as 400 naming the field
 * before any handler runs, for callers over the gateway and over RPC alike
 * (a server stream's request as it is read): a NUL character (PostgreSQL
 * refuses it), a lone UTF-16 surrogate (not text), a number that is not
 * finite (JSON has none), a field the contract does not name, a field of
 * another route sharing the request message (request_fields), and an id out
 * of the shape the contract gives it (id_prefix), so no query ever runs on it.
 */
export function inputGuard(): Interceptor {
  return (next) => (req) => {
    if (!req.stream) {
      checkInput(req.method, req.message);
      return next(req);
    }
    return next({ ...req, message: checkedEach(req.method, req.message) });
  };
}

async function* checkedEach<M extends Message>(method: DescMethod, messages: AsyncIterable<M>): AsyncIterable<M> {
  for await (const message of messages) {
    checkInput(method, message);
    yield message;
  }
}

/** Throws 400 request.invalid naming the first field of a request its route cannot take. */
export function checkInput(method: DescMethod, message: Message): void {
  const field = unstorable(message, "");
  if (field !== undefined)
    throw invalid(
      field || "body",
      `Field ${field || "body"} holds text or a number that cannot be stored (NUL, a lone surrogate, or not finite).`,
    );
  const unknown = unknownField(message, "");
  if (unknown !== undefined)
    throw invalid(
      unknown,
      `Field ${unknown} is not part of this request: fields the contract does not name are refused, never dropped.`,
    );
  const foreign = foreignField(method, message);
  if (foreign !== undefined) {
    const reads = [...routeFieldsOf(method)!].join(", ") || "no field";
    throw invalid(
      foreign,
      `Field ${foreign} is not part of this route (it reads ${reads}): another route's fields are refused, never ignored.`,
    );
  }
  const id = badId(reflect(method.input, message), "");
  if (id) throw invalid(id.field, id.detail);
}

const routeFields = new WeakMap<DescMethod, ReadonlySet<string> | null>();

/** The fields a route reads where its request message is shared (request_fields); undefined: all of them. */
export function routeFieldsOf(method: DescMethod): ReadonlySet<string> | undefined {
  let found = routeFields.get(method);
  if (found === undefined) {
    found = hasOption(method, requestFields) ? new Set(getOption(method, requestFields).names) : null;
    routeFields.set(method, found);
  }
  return found ?? undefined;
}

/** The first top-level field set in a request that its route does not read, or undefined. */
export function foreignField(method: DescMethod, message: Message): string | undefined {
  const reads = routeFieldsOf(method);
  return reads && method.input.fields.find((field) => !reads.has(field.name) && isFieldSet(message, field))?.name;
}

/** How a string field holding ids is bounded: its longest value, and the shape its prefix gives it. */
export interface IdRule {
  readonly maxLength: number;
  /** The id_prefix, and the shape it gives (`idPattern`). */
  readonly prefix?: string;
  readonly pattern?: RegExp;
}

const idRules = new WeakMap<DescField, IdRule | null>();

/**
 * The rule of a request's string field that holds ids: the shape of its
 * id_prefix, or for an `id`, `…_id` or `…_ids` field without one (ids others
 * make) a length cap; undefined for other fields.
 */
export function idRuleOf(field: DescField): IdRule | undefined {
  let found = idRules.get(field);
  if (found === undefined) {
    found = ruleOf(field);
    idRules.set(field, found);
  }
  return found ?? undefined;
}

function ruleOf(field: DescField): IdRule | null {
  if (field.scalar !== ScalarType.STRING || (field.fieldKind !== "scalar" && field.fieldKind !== "list")) return null;
  const prefix = getOption(field, idPrefix);
  if (prefix !== "") return { maxLength: prefix.length + 1 + ID_BODY_MAX, prefix, pattern: idPattern(prefix) };
  return /^(?:id|ids)$|_ids?$/.test(field.name) ? { maxLength: FOREIGN_ID_MAX } : null;
}

/** A field refused, and why. */
interface Fault {
  field: string;
  detail: string;
}

/** The first id out of its rule in a message, or undefined when every id fits. */
function badId(message: ReflectMessage, path: string): Fault | undefined {
  if (!holdsIds(message.desc)) return undefined;
  for (const field of message.fields) {
    if (!message.isSet(field)) continue;
    const at = path === "" ? field.name : `${path}.${field.name}`;
    const rule = idRuleOf(field);
    let found: Fault | undefined;
    if (rule && field.fieldKind === "scalar") found = idFault(at, rule, message.get(field) as string);
    else if (rule && field.fieldKind === "list")
      found = first(message.get(field).entries(), ([i, value]) => idFault(`${at}[${i}]`, rule, value as string));
    else if (field.fieldKind === "message") found = badId(message.get(field), at);
    else if (field.fieldKind === "list" && field.listKind === "message")
      found = first(message.get(field).entries(), ([i, item]) => badId(item as ReflectMessage, `${at}[${i}]`));
    else if (field.fieldKind === "map" && field.mapKind === "message")
      found = first(message.get(field), ([key, item]) => badId(item as ReflectMessage, `${at}.${String(key)}`));
    if (found) return found;
  }
  return undefined;
}

/** The first fault a check finds among items. */
function first<T>(items: Iterable<T>, check: (item: T) => Fault | undefined): Fault | undefined {
  for (const item of items) {
    const found = check(item);
    if (found) return found;
  }
  return undefined;
}

/** Why an id breaks its rule, or undefined; "" is no id (unset, or an optional field cleared). */
function idFault(field: string, rule: IdRule, value: string): Fault | undefined {
  if (value === "" || (value.length <= rule.maxLength && (!rule.pattern || rule.pattern.test(value)))) return undefined;
  const detail = rule.prefix
    ? `Field ${field} is not a ${rule.prefix}_ id: ${rule.prefix}_ followed by 1 to ${ID_BODY_MAX} lowercase letters or digits.`
    : `Field ${field} is longer than ${rule.maxLength} characters: no id is.`;
  return { field, detail };
}

const idHolders = new WeakMap<DescMessage, boolean>();

/** Whether a message, or one nested in it, has a field holding ids: the walk skips those that have none. */
function holdsIds(message: DescMessage, seen: ReadonlySet<DescMessage> = new Set()): boolean {
  const known = idHolders.get(message);
  if (known !== undefined) return known;
  const inner = new Set([...seen, message]);
  const holds = message.fields.some((field) => {
    if (idRuleOf(field)) return true;
    const nested = field.fieldKind === "scalar" || field.fieldKind === "enum" ? undefined : field.message;
    return (
      nested !== undefined &&
      !nested.typeName.startsWith("google.protobuf.") &&
      !inner.has(nested) &&
      holdsIds(nested, inner)
    );
  });
  if (seen.size === 0) idHolders.set(message, holds);
  return holds;
}

/**
 * The path of the first field a binary caller sent that the contract does not
 * name (protobuf keeps them as unknown fields): `weight` sent to a vote would
 * otherwise be dropped silently, where the gateway refuses it by name.
 */
export function unknownField(value: unknown, path: string): string | undefined {
  if (typeof value !== "object" || value === null || value instanceof Uint8Array) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unknownField(value[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (!("$typeName" in value)) return undefined;
  const unknown = (value as { $unknown?: { no: number }[] }).$unknown;
  if (unknown && unknown.length > 0) return `${path === "" ? "" : `${path}.`}#${unknown[0].no}`;
  for (const key in value) {
    if (key === "$typeName" || key === "$unknown") continue;
    const found = unknownField(
      (value as Record<string, unknown>)[key],
      path === "" ? snake(key) : `${path}.${snake(key)}`,
    );
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The path of the first unstorable value (or object key) in a message or JSON value, or undefined. */
export function unstorable(value: unknown, path: string): string | undefined {
  const trail = find(value);
  if (trail === undefined) return undefined;
  return trail.reduce<string>(
    (at, step) => (typeof step === "number" ? `${at}[${step}]` : at === "" ? step : `${at}.${step}`),
    path,
  );
}

/** The steps to the first unstorable value, built only on the way back out from one. */
function find(value: unknown): (string | number)[] | undefined {
  switch (typeof value) {
    case "string":
      return badText(value) ? [] : undefined;
    case "number":
      return Number.isFinite(value) ? undefined : [];
    case "object": {
      if (value === null || value instanceof Uint8Array) return undefined;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) {
          const trail = find(value[i]);
          if (trail) return [i, ...trail];
        }
        return undefined;
      }
      // A message's members are lowerCamel in code and snake_case in the contract; JSON keys are as given.
      const message = "$typeName" in value;
      for (const key in value) {
        if (key === "$typeName" || key === "$unknown") continue;
        const step = message ? snake(key) : key;
        if (!message && badText(key)) return [step];
        const trail = find((value as Record<string, unknown>)[key]);
        if (trail) return [step, ...trail];
      }
      return undefined;
    }
    default:
      return undefined;
  }
}

function badText(text: string): boolean {
  return text.includes("\u0000") || !text.isWellFormed();
}

/** Message members are lowerCamel in code; the contract names them snake_case. */
function snake(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
