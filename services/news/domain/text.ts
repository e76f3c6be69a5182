import { problem } from "../../kit/handler/problem.js";
import { maxLength } from "../../kit/handler/text.js";

/**
 * Limits of a revision (designed) that depend on where a cited text stands. The contract declares the others (each
 * text not blank, at most 50 citations and 200 paragraphs, notes 2000 characters).
 */
export const LIMITS = { headline: 300, paragraph: 20_000 } as const;

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
 * Checks one cited text: Markdown within its limit (a headline's or a
 * paragraph's), each citation a number of the story's live (attached) sources
 * when saved (422 citation.unknown_source naming the field: a number that
 * never existed, one detached, or another story's).
 */
export function citedText(field: string, input: CitedInput, max: number, live: Set<number>): Cited {
  const text = maxLength(`${field}.text`, input.text, max);
  const citations = [...new Set(input.citations)];
  const unknown = citations.find((number) => !live.has(number));
  if (unknown !== undefined)
    throw problem(422, "citation.unknown_source", `Source ${unknown} is not attached to this story.`, {
      field: `${field}.citations`,
      number: unknown,
    });
  return { text, citations };
}
