import { getOption, hasOption, ScalarType, type DescEnum, type DescField } from "@bufbuild/protobuf";
import type { ReflectList, ReflectMessage } from "@bufbuild/protobuf/reflect";
import { FeatureSet_FieldPresence } from "@bufbuild/protobuf/wkt";
import { Ignore, rules as rulesOption, type FieldRules, type StringRules } from "../../../gen/pf/v1/options_pb.js";

/**
 * The input rules a contract declares on its fields (`(pf.v1.rules)`,
 * protovalidate's FieldRules by name), checked as protovalidate checks them:
 * pure, no I/O. The input guard (input.ts) walks a request with them; the
 * gateway carries them into OpenAPI (gateway/rule-schemas.ts).
 */

/** A value refused: where (`title`, `alerts.duration_ms`, `slugs[2]`), the rule it breaks, and a sentence saying so. */
export interface Fault {
  readonly field: string;
  /** protovalidate's rule id where one is (`required`, `string.max_len`, `int32.gte_lte`), else the guard's own. */
  readonly rule: string;
  readonly message: string;
}

const declared = new WeakMap<DescField, FieldRules | null>();

/** The rules declared on a field, or undefined. */
export function fieldRulesOf(field: DescField): FieldRules | undefined {
  let found = declared.get(field);
  if (found === undefined) {
    found = hasOption(field, rulesOption) ? getOption(field, rulesOption) : null;
    declared.set(field, found);
  }
  return found ?? undefined;
}

/** Why a field's rules cannot apply to it (string rules on a number…), or undefined when they fit. */
export function ruleMismatch(field: DescField): string | undefined {
  const rules = fieldRulesOf(field);
  if (!rules?.type.case) return undefined;
  if (rules.type.case === "repeated") {
    if (field.fieldKind !== "list") return "repeated rules on a field that is not repeated";
    const items = rules.type.value.items;
    return items && typeMismatch(items, field.listKind === "enum" ? "enum" : field.scalar);
  }
  if (field.fieldKind !== "scalar" && field.fieldKind !== "enum")
    return `${rules.type.case} rules on a ${field.fieldKind}`;
  return typeMismatch(rules, field.fieldKind === "enum" ? "enum" : field.scalar);
}

const CASE_OF: Partial<Record<ScalarType, FieldRules["type"]["case"]>> = {
  [ScalarType.DOUBLE]: "double",
  [ScalarType.INT32]: "int32",
  [ScalarType.INT64]: "int64",
  [ScalarType.UINT32]: "uint32",
  [ScalarType.STRING]: "string",
};

function typeMismatch(rules: FieldRules, type: ScalarType | "enum" | undefined): string | undefined {
  const expected = type === "enum" ? "enum" : type === undefined ? undefined : CASE_OF[type];
  if (rules.type.case === undefined || rules.type.case === expected) return undefined;
  return `${rules.type.case} rules on a field of another type`;
}

/**
 * What a message's field breaks of its declared rules, the field named `at`.
 * `required` first: unset, nothing else is checked. A field tracking presence
 * (optional, a message, a oneof member) is checked only when set; any other
 * always; with `ignore: IGNORE_IF_ZERO_VALUE`, neither when it holds its zero value.
 */
export function ruleFaults(message: ReflectMessage, field: DescField, at: string): Fault[] {
  const rules = fieldRulesOf(field);
  if (!rules) return [];
  const set = message.isSet(field);
  if (rules.required && !set) return [{ field: at, rule: "required", message: `${at} is required.` }];
  if (!set && (tracksPresence(field) || rules.ignore === Ignore.IF_ZERO_VALUE)) return [];
  if (field.fieldKind === "list") return listFaults(rules, field, message.get(field), at);
  if (field.fieldKind === "scalar" || field.fieldKind === "enum") {
    const value = message.get(field);
    // As protovalidate: an `optional` field sent as its zero value is skipped too ("" clears, 0 is the default).
    if (rules.ignore === Ignore.IF_ZERO_VALUE && isZero(value)) return [];
    return valueFaults(rules, field.fieldKind === "enum" ? field.enum : undefined, value, at);
  }
  return [];
}

function tracksPresence(field: DescField): boolean {
  if (field.fieldKind === "message") return true;
  if (field.fieldKind === "list" || field.fieldKind === "map") return false;
  return field.presence !== FeatureSet_FieldPresence.IMPLICIT;
}

function listFaults(
  rules: FieldRules,
  field: DescField & { fieldKind: "list" },
  list: ReflectList,
  at: string,
): Fault[] {
  if (rules.type.case !== "repeated") return [];
  const { minItems, maxItems, unique, items } = rules.type.value;
  const faults: Fault[] = [];
  if (minItems !== undefined && list.size < minItems)
    faults.push({ field: at, rule: "repeated.min_items", message: `${at} holds at least ${minItems} items.` });
  if (maxItems !== undefined && list.size > maxItems)
    faults.push({ field: at, rule: "repeated.max_items", message: `${at} holds at most ${maxItems} items.` });
  if (unique && field.listKind !== "message" && new Set(list.values()).size !== list.size)
    faults.push({ field: at, rule: "repeated.unique", message: `${at} holds an item twice.` });
  if (items && field.listKind !== "message") {
    for (const [index, item] of list.entries()) {
      if (items.ignore === Ignore.IF_ZERO_VALUE && isZero(item)) continue;
      faults.push(...valueFaults(items, field.listKind === "enum" ? field.enum : undefined, item, `${at}[${index}]`));
    }
  }
  return faults;
}

function isZero(value: unknown): boolean {
  return value === "" || value === 0 || value === 0n || value === false;
}

/** What one value (a field's, or a list item's) breaks of its type's rules. */
function valueFaults(rules: FieldRules, descEnum: DescEnum | undefined, value: unknown, at: string): Fault[] {
  const { type } = rules;
  switch (type.case) {
    case "string":
      return stringFaults(type.value, value as string, at);
    case "enum": {
      const faults: Fault[] = [];
      if (type.value.definedOnly && !descEnum!.values.some((each) => each.number === value))
        faults.push({ field: at, rule: "enum.defined_only", message: `${at} is not a value of ${descEnum!.name}.` });
      if (type.value.notIn.includes(value as number)) {
        const named = descEnum!.values.find((each) => each.number === value)?.name ?? String(value);
        faults.push({ field: at, rule: "enum.not_in", message: `${at} may not be ${named} here.` });
      }
      return faults;
    }
    case "double":
    case "int32":
    case "int64":
    case "uint32": {
      const fault = boundsFault(type.case, type.value, value as number | bigint, at);
      return fault ? [fault] : [];
    }
    default:
      return [];
  }
}

function stringFaults(rules: StringRules, value: string, at: string): Fault[] {
  const faults: Fault[] = [];
  // Code points, as PostgreSQL counts characters: never more than .length (UTF-16 units), which settles most values.
  const counted =
    (rules.minLen !== undefined && value.length >= rules.minLen) ||
    (rules.maxLen !== undefined && value.length > rules.maxLen);
  const length = counted ? characters(value) : value.length;
  if (rules.minLen !== undefined && length < rules.minLen)
    faults.push({ field: at, rule: "string.min_len", message: `${at} holds at least ${rules.minLen} characters.` });
  if (rules.maxLen !== undefined && length > rules.maxLen)
    faults.push({ field: at, rule: "string.max_len", message: `${at} holds at most ${rules.maxLen} characters.` });
  if (rules.pattern !== undefined && !patternOf(rules.pattern).test(value))
    faults.push({ field: at, rule: "string.pattern", message: `${at} does not match ${rules.pattern}.` });
  if (rules.in.length > 0 && !rules.in.includes(value))
    faults.push({ field: at, rule: "string.in", message: `${at} is one of ${rules.in.join(", ")}.` });
  return faults;
}

function characters(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // A surrogate pair is one character (lone surrogates never get here: the guard refuses them first).
    if (unit >= 0xd800 && unit <= 0xdbff) i++;
    count++;
  }
  return count;
}

const patterns = new Map<string, RegExp>();

/** A declared pattern, compiled once (the contracts hold a fixed set). */
export function patternOf(pattern: string): RegExp {
  let found = patterns.get(pattern);
  if (!found) {
    found = new RegExp(pattern, "u");
    patterns.set(pattern, found);
  }
  return found;
}

/** The bounds a numeric rule declares, as protovalidate names them. */
export interface Bounds {
  readonly lessThan: { case: "lt" | "lte"; value: number | bigint } | { case: undefined; value?: undefined };
  readonly greaterThan: { case: "gt" | "gte"; value: number | bigint } | { case: undefined; value?: undefined };
}

/** One fault for a value out of its bounds, named as protovalidate does (`int32.gte_lte`: both bounds in one). */
function boundsFault(kind: string, bounds: Bounds, value: number | bigint, at: string): Fault | undefined {
  const { lessThan: upper, greaterThan: lower } = bounds;
  const below = lower.case === "gt" ? value <= lower.value : lower.case === "gte" ? value < lower.value : false;
  const above = upper.case === "lt" ? value >= upper.value : upper.case === "lte" ? value > upper.value : false;
  if (!below && !above) return undefined;
  const says: string[] = [];
  if (lower.case) says.push(`${lower.case === "gt" ? "more than" : "at least"} ${lower.value}`);
  if (upper.case) says.push(`${upper.case === "lt" ? "less than" : "at most"} ${upper.value}`);
  const rule = [lower.case, upper.case].filter(Boolean).join("_");
  return { field: at, rule: `${kind}.${rule}`, message: `${at} must be ${says.join(" and ")}.` };
}
