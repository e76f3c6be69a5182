import { invalid, problem } from "../../kit/handler/problem.js";
import { userText } from "../../kit/handler/text.js";

/** Limits of a revision (designed). */
export const LIMITS = { headline: 300, paragraph: 20_000, paragraphs: 200, citations: 50, note: 2_000 } as const;

/** Cited text as a request carries it. */
export interface CitedInput {
  text: string;
  citations: number[];
}

/** Cited text as stored. */
export interface Cited {
  text: string;
  citations: number[];
}

/**
 * Checks one cited text: Markdown within its limit, each citation a number of
 * the story's live (attached) sources when saved (422 citation.unknown_source
 * naming the field: a number that never existed, one detached, or another
 * story's).
 */
export function citedText(field: string, input: CitedInput, max: number, live: Set<number>, optional = false): Cited {
  const text = userText(`${field}.text`, input.text, max, optional);
  if (input.citations.length > LIMITS.citations)
    throw invalid(`${field}.citations`, `At most ${LIMITS.citations} citations.`);
  const citations = [...new Set(input.citations)];
  const unknown = citations.find((number) => !live.has(number));
  if (unknown !== undefined)
    throw problem(422, "citation.unknown_source", `Source ${unknown} is not attached to this story.`, {
      field: `${field}.citations`,
      number: unknown,
    });
  return { text, citations };
}
