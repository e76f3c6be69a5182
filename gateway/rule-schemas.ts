import type { DescEnum, DescField, DescMessage, JsonObject } from "@bufbuild/protobuf";
import { Ignore, type FieldRules } from "../gen/pf/v1/options_pb.js";
import { fieldRulesOf, type Bounds } from "../services/kit/rpc/field-rules.js";

/**
 * The input rules a contract declares (`(pf.v1.rules)`) as JSON Schema
 * keywords, so the OpenAPI documents say what the input guard refuses and a
 * generated client marks required fields required: `required` on the object,
 * `minLength`/`maxLength`/`pattern`/`enum` for strings, `minimum`/`maximum`
 * (`exclusive…` for gt/lt) for numbers, `minItems`/`maxItems`/`uniqueItems`
 * and the items' keywords for lists, and an enum's values without its zero value
 * when required and without those `not_in` names.
 */

/** The fields of a message its object schema lists as `required`. */
export function requiredFields(message: DescMessage): string[] {
  return message.fields.filter(declaredRequired).map((field) => field.name);
}

/** Whether a field's rules require it (a query parameter's `required`). */
export function declaredRequired(field: DescField): boolean {
  return fieldRulesOf(field)?.required ?? false;
}

/** The keywords of a field's own schema (a list's: the array's) from its declared rules; {} when it has none. */
export function ruleKeywords(field: DescField): JsonObject {
  const rules = fieldRulesOf(field);
  if (!rules) return {};
  if (field.fieldKind === "list") {
    const repeated = rules.type.case === "repeated" ? rules.type.value : undefined;
    const minItems = repeated?.minItems ?? (rules.required ? 1n : undefined);
    return {
      ...(minItems !== undefined && { minItems: Number(minItems) }),
      ...(repeated?.maxItems !== undefined && { maxItems: Number(repeated.maxItems) }),
      ...(repeated?.unique && { uniqueItems: true }),
    };
  }
  if (field.fieldKind === "enum") return valueKeywords(rules, field.enum);
  if (field.fieldKind === "scalar") return valueKeywords(rules);
  return {};
}

/** The keywords of each item of a list from its declared `repeated.items` rules; {} when it has none. */
export function itemRuleKeywords(field: DescField): JsonObject {
  const rules = fieldRulesOf(field);
  if (field.fieldKind !== "list" || rules?.type.case !== "repeated" || !rules.type.value.items) return {};
  return valueKeywords(rules.type.value.items, field.listKind === "enum" ? field.enum : undefined);
}

/**
 * The keywords of one value's rules; `required` on a value without presence also means not its zero value. Rules
 * skipped for the zero value (`IGNORE_IF_ZERO_VALUE`) admit it beside them: `anyOf` "" (or 0) or the rules.
 */
function valueKeywords(rules: FieldRules, descEnum?: DescEnum): JsonObject {
  const keywords = ruleValueKeywords(rules, descEnum);
  const zero = rules.type.case === "string" ? "" : rules.type.case === "enum" ? undefined : 0;
  if (rules.ignore !== Ignore.IF_ZERO_VALUE || zero === undefined || Object.keys(keywords).length === 0)
    return keywords;
  return { anyOf: [{ const: zero }, keywords] };
}

function ruleValueKeywords(rules: FieldRules, descEnum?: DescEnum): JsonObject {
  const { type } = rules;
  if (type.case === "string") {
    const minLength = type.value.minLen ?? (rules.required ? 1n : undefined);
    return {
      ...(minLength !== undefined && { minLength: Number(minLength) }),
      ...(type.value.maxLen !== undefined && { maxLength: Number(type.value.maxLen) }),
      ...(type.value.pattern !== undefined && { pattern: type.value.pattern }),
      ...(type.value.in.length > 0 && { enum: type.value.in }),
    };
  }
  if (type.case === "double" || type.case === "int32" || type.case === "int64" || type.case === "uint32")
    return boundKeywords(type.value);
  if (!descEnum) return {};
  // A required enum is never its zero value (`…_UNSPECIFIED`); `not_in` leaves out the values a route does not take.
  const notIn = new Set(type.case === "enum" ? type.value.notIn : []);
  if (rules.required) notIn.add(0);
  return notIn.size > 0 ? { enum: descEnum.values.filter((v) => !notIn.has(v.number)).map((v) => v.name) } : {};
}

function boundKeywords({ lessThan: upper, greaterThan: lower }: Bounds): JsonObject {
  const keywords: JsonObject = {};
  if (lower.case) keywords[lower.case === "gt" ? "exclusiveMinimum" : "minimum"] = Number(lower.value);
  if (upper.case) keywords[upper.case === "lt" ? "exclusiveMaximum" : "maximum"] = Number(upper.value);
  return keywords;
}
