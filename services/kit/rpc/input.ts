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
import type { ConnectError, Interceptor } from "@connectrpc/connect";
import { id_prefix as idPrefix, request_fields as requestFields } from "../../../gen/pf/v1/options_pb.js";
import { MAX_FAULTS } from "../documents/json-schema.js";
import { FOREIGN_ID_MAX, ID_BODY_MAX, idPattern } from "../handler/ids.js";
import { problem } from "../handler/problem.js";
import { fieldRulesOf, ruleFaults, type Fault } from "./field-rules.js";

/**
 * Input no service can store or answer with, refused as 400 naming the field
 * before any handler runs, for callers over the gateway and over RPC alike
 * (a server stream's request as it is read): a NUL character (PostgreSQL
 * refuses it), a lone UTF-16 surrogate (not text), a number that is not
 * finite (JSON has none), a field the contract does not name, a field of
 * another route sharing the request message (request_fields), an id out of
 * the shape the contract gives it (id_prefix), and a value breaking the
 * field's declared rules (`(pf.v1.rules)`: required, lengths, ranges,
 * patterns…), so no query ever runs on it. Every fault of a request is
 * reported at once.
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

/**
 * Throws 400 request.invalid when a request breaks its route's contract:
 * `field` and the detail name the first fault, `errors` lists each (up to
 * 20) with its field, rule and message.
 */
export function checkInput(method: DescMethod, message: Message): void {
  const faults = inputFaults(method, message);
  if (faults.length > 0) throw refused(faults);
}

/** Every fault of a request, in the order the guard checks: storable, named, the route's, then field by field. */
export function inputFaults(method: DescMethod, message: Message): Fault[] {
  return [
    ...unstorable(message, "").map((field) => ({
      field: field || "body",
      rule: "storable",
      message: `Field ${field || "body"} holds text or a number that cannot be stored (NUL, a lone surrogate, or not finite).`,
    })),
    ...unknownFields(message, "").map((field) => ({
      field,
      rule: "known",
      message: `Field ${field} is not part of this request: fields the contract does not name are refused, never dropped.`,
    })),
    ...foreignFields(method, message).map((field) => ({
      field,
      rule: "request_fields",
      message: `Field ${field} is not part of this route (it reads ${[...routeFieldsOf(method)!].join(", ") || "no field"}): another route's fields are refused, never ignored.`,
    })),
    ...fieldFaults(reflect(method.input, message), "", routeFieldsOf(method)),
  ];
}

function refused(faults: readonly Fault[]): ConnectError {
  const [first] = faults;
  const more = faults.length > 1 ? ` ${faults.length - 1} more in errors.` : "";
  return problem(400, "request.invalid", first.message + more, {
    field: first.field,
    errors: faults.slice(0, MAX_FAULTS).map(({ field, rule, message }) => ({ field, rule, message })),
  });
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

/** The top-level fields set in a request that its route does not read. */
function foreignFields(method: DescMethod, message: Message): string[] {
  const reads = routeFieldsOf(method);
  if (!reads) return [];
  return method.input.fields.filter((field) => !reads.has(field.name) && isFieldSet(message, field)).map((f) => f.name);
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
 * make) a length cap, unless its declared rules bound its length (`max_len`:
 * search's document ids are 200 characters); undefined for other fields.
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
  if (!/^(?:id|ids)$|_ids?$/.test(field.name) || declaresMaxLen(field)) return null;
  return { maxLength: FOREIGN_ID_MAX };
}

/** Whether a string field's declared rules (a list's: each item's) bound its length. */
function declaresMaxLen(field: DescField): boolean {
  const rules = fieldRulesOf(field);
  const own = rules?.type.case === "repeated" ? rules.type.value.items : rules;
  return own?.type.case === "string" && own.type.value.maxLen !== undefined;
}

/**
 * The faults of a message's fields, by their id rules and declared rules,
 * nested messages included; of a request, only the fields its route reads
 * (`reads`: the others are refused when set).
 */
function fieldFaults(message: ReflectMessage, path: string, reads?: ReadonlySet<string>): Fault[] {
  if (!holdsRules(message.desc)) return [];
  const faults: Fault[] = [];
  for (const field of message.fields) {
    if (reads && !reads.has(field.name)) continue;
    const at = path === "" ? field.name : `${path}.${field.name}`;
    faults.push(...ruleFaults(message, field, at));
    if (!message.isSet(field)) continue;
    const rule = idRuleOf(field);
    if (rule && field.fieldKind === "scalar") faults.push(...idFaults(at, rule, message.get(field) as string));
    else if (rule && field.fieldKind === "list")
      for (const [i, value] of message.get(field).entries())
        faults.push(...idFaults(`${at}[${i}]`, rule, value as string));
    else if (field.fieldKind === "message") faults.push(...fieldFaults(message.get(field), at));
    else if (field.fieldKind === "list" && field.listKind === "message")
      for (const [i, item] of message.get(field).entries())
        faults.push(...fieldFaults(item as ReflectMessage, `${at}[${i}]`));
    else if (field.fieldKind === "map" && field.mapKind === "message")
      for (const [key, item] of message.get(field))
        faults.push(...fieldFaults(item as ReflectMessage, `${at}.${String(key)}`));
  }
  return faults;
}

/** Why an id breaks its rule (none or one fault); "" is no id (unset, or an optional field cleared). */
function idFaults(field: string, rule: IdRule, value: string): Fault[] {
  if (value === "" || (value.length <= rule.maxLength && (!rule.pattern || rule.pattern.test(value)))) return [];
  if (rule.prefix) {
    const message = `Field ${field} is not a ${rule.prefix}_ id: ${rule.prefix}_ followed by 1 to ${ID_BODY_MAX} lowercase letters or digits.`;
    return [{ field, rule: "id_prefix", message }];
  }
  return [
    { field, rule: "id.max_len", message: `Field ${field} is longer than ${rule.maxLength} characters: no id is.` },
  ];
}

const ruleHolders = new WeakMap<DescMessage, boolean>();

/** Whether a message, or one nested in it, has a field holding ids or declaring rules: the walk skips the others. */
function holdsRules(message: DescMessage, seen: ReadonlySet<DescMessage> = new Set()): boolean {
  const known = ruleHolders.get(message);
  if (known !== undefined) return known;
  const inner = new Set([...seen, message]);
  const holds = message.fields.some((field) => {
    if (idRuleOf(field) || fieldRulesOf(field)) return true;
    const nested = field.fieldKind === "scalar" || field.fieldKind === "enum" ? undefined : field.message;
    return (
      nested !== undefined &&
      !nested.typeName.startsWith("google.protobuf.") &&
      !inner.has(nested) &&
      holdsRules(nested, inner)
    );
  });
  if (seen.size === 0) ruleHolders.set(message, holds);
  return holds;
}

/**
 * The paths of the fields a binary caller sent that the contract does not
 * name (protobuf keeps them as unknown fields): `weight` sent to a vote would
 * otherwise be dropped silently, where the gateway refuses it by name.
 */
export function unknownFields(value: unknown, path: string): string[] {
  const found: string[] = [];
  const walk = (value: unknown, path: string): void => {
    if (typeof value !== "object" || value === null || value instanceof Uint8Array) return;
    if (Array.isArray(value)) {
      value.forEach((item, i) => walk(item, `${path}[${i}]`));
      return;
    }
    if (!("$typeName" in value)) return;
    for (const { no } of (value as { $unknown?: { no: number }[] }).$unknown ?? [])
      found.push(`${path === "" ? "" : `${path}.`}#${no}`);
    for (const key in value) {
      if (key === "$typeName" || key === "$unknown") continue;
      walk((value as Record<string, unknown>)[key], path === "" ? snake(key) : `${path}.${snake(key)}`);
    }
  };
  walk(value, path);
  return found;
}

/** The paths of the unstorable values (and object keys) in a message or JSON value. */
export function unstorable(value: unknown, path: string): string[] {
  const found: string[] = [];
  // The steps to the value at hand, rendered as a path only for one found unstorable.
  const trail: (string | number)[] = [];
  const report = (last?: string) =>
    found.push(
      [...trail, ...(last === undefined ? [] : [last])].reduce<string>(
        (at, step) => (typeof step === "number" ? `${at}[${step}]` : at === "" ? step : `${at}.${step}`),
        path,
      ),
    );
  const walk = (value: unknown): void => {
    switch (typeof value) {
      case "string":
        if (badText(value)) report();
        return;
      case "number":
        if (!Number.isFinite(value)) report();
        return;
      case "object": {
        if (value === null || value instanceof Uint8Array) return;
        if (Array.isArray(value)) {
          value.forEach((item, i) => {
            trail.push(i);
            walk(item);
            trail.pop();
          });
          return;
        }
        // A message's members are lowerCamel in code and snake_case in the contract; JSON keys are as given.
        const message = "$typeName" in value;
        for (const key in value) {
          if (key === "$typeName" || key === "$unknown") continue;
          const step = message ? snake(key) : key;
          if (!message && badText(key)) {
            report(step);
            continue;
          }
          trail.push(step);
          walk((value as Record<string, unknown>)[key]);
          trail.pop();
        }
      }
    }
  };
  walk(value);
  return found;
}

function badText(text: string): boolean {
  return text.includes("\u0000") || !text.isWellFormed();
}

/** Message members are lowerCamel in code; the contract names them snake_case. */
function snake(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}
