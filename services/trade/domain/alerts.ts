import { invalid } from "../../kit/handler/problem.js";

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

/** A rule as asked, as the contract's rules let it through: kind and direction as stored words ("" when unset). */
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
/** What a kind cannot go without (its fields' shapes are the contract's rules). */
const NEEDS: Record<RuleFields["kind"], (keyof typeof FIELDS)[]> = {
  threshold: ["metric", "unit", "level"],
  filing_type: ["filingType"],
  new_document: [],
};

/** Checks a rule's fields against its kind: those it needs are there, those of another kind are not. */
export function ruleFields(input: RuleInput): RuleFields {
  const kind = input.kind as RuleFields["kind"];
  for (const field of Object.keys(FIELDS) as (keyof typeof FIELDS)[]) {
    if (input[field] !== "" && !USES[kind].includes(field))
      throw invalid(FIELDS[field], `${FIELDS[field]} is not used by a ${kind} rule`);
  }
  for (const field of NEEDS[kind]) {
    if (input[field] === "") throw invalid(FIELDS[field], `${FIELDS[field]} is required by a ${kind} rule`);
  }
  return {
    kind,
    metric: input.metric,
    unit: input.unit,
    currency: input.currency,
    levelText: input.level,
    direction: (input.direction || "either") as RuleFields["direction"],
    filingType: input.filingType.trim(),
  };
}
