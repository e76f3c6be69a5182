import { problem } from "../../kit/handler/problem.js";

/** A citation marker in context text: `[3]`. */
const MARKER = /\[(\d{1,4})\]/g;

/**
 * The sources a proposal cites, checked against the input it names (`count`
 * numbered sources): at least one, each a number of the input and listed
 * once, and every `[k]` marker of the text among them. Answers them in number
 * order; otherwise 422 `context.citation_invalid`.
 */
export function checkCitations(citations: readonly number[], text: string, count: number): number[] {
  if (citations.length === 0) throw citationInvalid("A context cites at least one source of its input.", []);
  const outside = citations.filter((n) => !Number.isInteger(n) || n < 1 || n > count);
  if (outside.length > 0)
    throw citationInvalid(`The input has sources 1 to ${count}; ${outside.join(", ")} is not one of them.`, outside);
  const twice = citations.filter((n, i) => citations.indexOf(n) !== i);
  if (twice.length > 0) throw citationInvalid(`Each source is cited once; ${twice.join(", ")} is repeated.`, twice);
  const unlisted = [...text.matchAll(MARKER)].map((m) => Number(m[1])).filter((n) => !citations.includes(n));
  if (unlisted.length > 0)
    throw citationInvalid(`The text marks [${unlisted.join("], [")}] but does not cite it.`, [...new Set(unlisted)]);
  return [...citations].sort((a, b) => a - b);
}

function citationInvalid(detail: string, numbers: number[]): Error {
  return problem(422, "context.citation_invalid", detail, { citations: numbers });
}
