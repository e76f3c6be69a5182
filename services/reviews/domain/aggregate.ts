/** A rating as the aggregate reads it. */
export interface RatingInput {
  id: string;
  entityId: string;
  sourceKey: string;
  score: number;
  scale: number;
}

/** An exclusion as the aggregate applies it. */
export interface ExclusionInput {
  id: string;
  signalId: string;
  sourceKey: string;
  reason: string;
}

/** The aggregate: its exact inputs and what was left out with the reason. */
export interface AggregateOf {
  score: string;
  inputs: RatingInput[];
  excluded: (RatingInput & { exclusionId: string; reason: string })[];
}

/** The formula, as the aggregate states it. */
export const AGGREGATE_METHOD =
  "mean of every rating not excluded, each scaled to 0-100 (score / scale x 100), two decimals rounded half up";

/**
 * The aggregate of ratings (designed: the spec gives no formula). Pure and
 * deterministic: the same ratings and exclusions give the same answer in any
 * order; exact rational arithmetic, never floats. A rating is left out by the
 * first exclusion (by id) naming it or its source.
 */
export function aggregateOf(ratings: RatingInput[], exclusions: ExclusionInput[]): AggregateOf {
  const rules = [...exclusions].sort((a, b) => compare(a.id, b.id));
  const inputs: RatingInput[] = [];
  const excluded: AggregateOf["excluded"] = [];
  for (const rating of [...ratings].sort((a, b) => compare(a.id, b.id))) {
    const rule = rules.find(
      (each) =>
        (each.signalId !== "" && each.signalId === rating.id) ||
        (each.sourceKey !== "" && each.sourceKey === rating.sourceKey),
    );
    if (rule) excluded.push({ ...rating, exclusionId: rule.id, reason: rule.reason });
    else inputs.push(rating);
  }
  return { score: meanScore(inputs), inputs, excluded };
}

/** The mean on 0-100 with two decimals, half up; "" without inputs. */
export function meanScore(inputs: { score: number; scale: number }[]): string {
  if (inputs.length === 0) return "";
  // Σ score/scale as one fraction, then × 100 / n, in hundredths.
  let numerator = 0n;
  let denominator = 1n;
  for (const { score, scale } of inputs) {
    numerator = numerator * BigInt(scale) + BigInt(score) * denominator;
    denominator *= BigInt(scale);
  }
  const scaled = numerator * 10000n;
  const whole = denominator * BigInt(inputs.length);
  const hundredths = (scaled * 2n + whole) / (whole * 2n);
  return `${hundredths / 100n}.${(hundredths % 100n).toString().padStart(2, "0")}`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
