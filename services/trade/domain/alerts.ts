import { requireDecimal } from "../../kit/handler/decimals.js";
import { invalid } from "../../kit/handler/problem.js";
import { METRIC, optionalCurrency, requireWord, UNIT } from "./observations.js";

/** A rule's kind-specific fields, checked; fields another kind uses are refused, never ignored. */
export interface RuleFields {
  kind: "threshold" | "filing_type" | "new_document";
  metric: string;
  unit: string;
  currency: string;
  levelText: string;
  direction: "up" | "down" | "either";
  filingType: string;
}

interface RuleInput {
  kind: string;
  metric: string;
  unit: string;
  currency: string;
  level: string;
  direction: string;
  filingType: string;
}

const FIELDS = {
  metric: "metric",
  unit: "unit",
  currency: "currency",
  level: "level",
  direction: "direction",
  filingType: "filing_type",
} as const;
const USES: Record<RuleFields["kind"], (keyof typeof FIELDS)[]> = {
  threshold: ["metric", "unit", "currency", "level", "direction"],
  filing_type: ["filingType"],
  new_document: [],
};

const DIRECTIONS = ["up", "down", "either"];

/** A form type as filings name it (`10-K`, `8-K`, `S-1/A`). */
const FORM = /^[A-Za-z0-9][A-Za-z0-9 ./-]{0,19}$/;

/**
 * Checks a rule's fields for its kind (kind and direction given as stored
 * words, "" when unset; a value the contract does not know is refused, never
 * read as unset).
 */
export function ruleFields(input: RuleInput): RuleFields {
  if (!(input.kind in USES))
    throw invalid("kind", "kind is ALERT_KIND_THRESHOLD, ALERT_KIND_FILING_TYPE or ALERT_KIND_NEW_DOCUMENT");
  const kind = input.kind as RuleFields["kind"];
  for (const field of Object.keys(FIELDS) as (keyof typeof FIELDS)[]) {
    if (input[field] !== "" && !USES[kind].includes(field))
      throw invalid(FIELDS[field], `${FIELDS[field]} is not used by a ${kind} rule`);
  }
  if (kind === "filing_type") {
    if (!FORM.test(input.filingType.trim()))
      throw invalid("filing_type", "filing_type is a form type such as 10-K (at most 20 characters)");
    return {
      kind,
      metric: "",
      unit: "",
      currency: "",
      levelText: "",
      direction: "either",
      filingType: input.filingType.trim(),
    };
  }
  if (kind === "new_document") {
    return { kind, metric: "", unit: "", currency: "", levelText: "", direction: "either", filingType: "" };
  }
  if (input.direction !== "" && !DIRECTIONS.includes(input.direction))
    throw invalid("direction", "direction is DIRECTION_UP, DIRECTION_DOWN or DIRECTION_EITHER");
  return {
    kind,
    metric: requireWord("metric", input.metric, 64, METRIC),
    unit: requireWord("unit", input.unit, 32, UNIT),
    currency: optionalCurrency("currency", input.currency),
    levelText: requireDecimal("level", input.level),
    direction: (input.direction || "either") as RuleFields["direction"],
    filingType: "",
  };
}
