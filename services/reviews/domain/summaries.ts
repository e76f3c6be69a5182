import { invalid, problem } from "../../kit/handler/problem.js";
import { maxLength } from "../../kit/handler/text.js";

/** A pro or con as given. */
export interface PointInput {
  text: string;
  citations: string[];
}

const POINT_MAX = 1000;
const OVERVIEW_MAX = 4000;

/**
 * Rating text (hardest rule 3: "never carries a rating"): "4/5", "4.5 out of 5",
 * "8/10", stars, "N stars", "rated …", "score of N", "N points out of".
 * Deterministic patterns; dates ("12/2026") and fractions of things are not ratings.
 */
const RATING_PATTERNS: RegExp[] = [
  /\b\d+(?:[.,]\d+)?\s*\/\s*(?:5|10|100)\b(?!\s*\/)/i,
  /\b\d+(?:[.,]\d+)?\s+out\s+of\s+\d+/i,
  /[★☆✩✪⭐]/u,
  /\b(?:\d+(?:[.,]\d+)?|one|two|three|four|five|half)[\s-]+stars?\b/i,
  /\brated\b/i,
  /\b(?:rating|score)\s+(?:of\s+)?\d/i,
  /\b\d+(?:[.,]\d+)?\s*(?:points?|pts)\s+out\b/i,
];

/** The rating phrase in a text, or undefined. */
export function ratingIn(text: string): string | undefined {
  for (const pattern of RATING_PATTERNS) {
    const found = pattern.exec(text);
    if (found) return found[0];
  }
  return undefined;
}

/**
 * A checked summary: the overview and points trimmed (then within their lengths), no rating, every point citing at
 * least one signal. The contract declares the rest: at most 20 pros and 20 cons, each point's text not blank.
 */
export function checkSummary(
  prefix: string,
  summary: { overview: string; pros: PointInput[]; cons: PointInput[] },
): { overview: string; pros: PointInput[]; cons: PointInput[] } {
  const field = (name: string) => (prefix === "" ? name : `${prefix}.${name}`);
  const overview = maxLength(field("overview"), summary.overview.trim(), OVERVIEW_MAX);
  refuseRating(field("overview"), overview);
  const points = (name: "pros" | "cons") => {
    return summary[name].map((point, i) => {
      const at = field(`${name}[${i}]`);
      const text = maxLength(`${at}.text`, point.text.trim(), POINT_MAX);
      refuseRating(`${at}.text`, text);
      if (point.citations.length === 0)
        throw problem(
          422,
          "summary.citation_invalid",
          `${at} cites no signal: every pro and con cites signals of the entity.`,
          {
            field: `${at}.citations`,
          },
        );
      return { text, citations: [...new Set(point.citations)] };
    });
  };
  const pros = points("pros");
  const cons = points("cons");
  if (pros.length + cons.length === 0) throw invalid(field("pros"), "a summary has at least one pro or con");
  return { overview, pros, cons };
}

/** The signals a summary cites, each once. */
export function citationsOf(summary: { pros: PointInput[]; cons: PointInput[] }): string[] {
  return [...new Set([...summary.pros, ...summary.cons].flatMap((point) => point.citations))];
}

/**
 * The pending revision after a split (analysis: "a summary citing split-off
 * signals is flagged with a pending revision"): the same points without the
 * split-off citations; a point left citing nothing goes.
 */
export function withoutCitations<T extends { pros: PointInput[]; cons: PointInput[] }>(summary: T, gone: Set<string>) {
  const keep = (points: PointInput[]) =>
    points
      .map((point) => ({ text: point.text, citations: point.citations.filter((id) => !gone.has(id)) }))
      .filter((point) => point.citations.length > 0);
  return { pros: keep(summary.pros), cons: keep(summary.cons) };
}

function refuseRating(field: string, text: string): void {
  const phrase = ratingIn(text);
  if (phrase !== undefined)
    throw problem(422, "summary.rating_refused", `${field} carries a rating ("${phrase}"): a summary never rates.`, {
      field,
      phrase,
    });
}
