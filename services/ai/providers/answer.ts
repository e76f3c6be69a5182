import { unusable } from "./http.js";
import { readingOf } from "./local/enrich.js";
import { sentencesOf, termsOf } from "./local/text.js";
import { subjectOf } from "./prompt.js";
import type { Citation, ProviderAnswer, ProviderCall, SourceDocument } from "./provider.js";

type Read = Pick<ProviderAnswer, "text" | "labels" | "fields" | "citations">;

/** The JSON object a model answered, code fences and words around it tolerated. */
function objectIn(text: string): Record<string, unknown> {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  try {
    const value: unknown = start >= 0 && end > start ? JSON.parse(text.slice(start, end + 1)) : undefined;
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Not JSON: refused below.
  }
  throw unusable("not the JSON object asked for");
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);

/** Scores of the labels given only, clamped to 0..1, best first (ties in label order); `{labels: {…}}`, a list or flat. */
function labelsIn(answer: Record<string, unknown>, labels: readonly string[]): ProviderAnswer["labels"] {
  const said = answer.labels ?? answer;
  const scores = new Map<string, unknown>(
    Array.isArray(said)
      ? said
          .filter(isObject)
          .map((entry) => [typeof entry.label === "string" ? entry.label.toLowerCase() : "", entry.score])
      : Object.entries(isObject(said) ? said : {}).map(([label, score]) => [label.toLowerCase(), score]),
  );
  if (!labels.some((label) => scores.has(label.toLowerCase()))) throw unusable("no label given was scored");
  return labels
    .map((label) => {
      const score = Number(scores.get(label.toLowerCase()) ?? 0);
      return { label, score: Number.isFinite(score) ? Math.min(1, Math.max(0, score)) : 0 };
    })
    .sort((a, b) => b.score - a.score);
}

const strings = (value: unknown): string[] =>
  Array.isArray(value)
    ? value
        .map((item) => (isObject(item) ? (item.name ?? item.text) : item))
        .filter((item): item is string => typeof item === "string" && item.trim() !== "")
    : [];

/** The answer sentence a [n] marker ends: the text back to the previous marker, its last sentence. */
function claimBefore(text: string, markerStart: number, previousEnd: number): string {
  return sentencesOf(text.slice(previousEnd, markerStart)).at(-1)?.text ?? "";
}

/** The document's sentence sharing most terms with the claim, else its first sentence. */
function citationOf(document: SourceDocument, claim: string): Citation | undefined {
  const claimed = new Set(termsOf(claim));
  let best: { span: ReturnType<typeof sentencesOf>[number]; shared: number } | undefined;
  for (const span of sentencesOf(document.text)) {
    const shared = new Set(termsOf(span.text).filter((term) => claimed.has(term))).size;
    if (!best || shared > best.shared) best = { span, shared };
  }
  if (!best) return undefined;
  const { text: quote, start, end } = best.span;
  return { documentId: document.id, url: document.url, quote, start, end };
}

/** The citations the [n] markers of a summary make, once each. */
export function citationsOf(text: string, documents: readonly SourceDocument[]): Citation[] {
  const citations = new Map<string, Citation>();
  let previousEnd = 0;
  for (const marker of text.matchAll(/\[(\d+(?:\s*,\s*\d+)*)\]/g)) {
    const claim = claimBefore(text, marker.index, previousEnd);
    previousEnd = marker.index + marker[0].length;
    for (const number of marker[1].split(",")) {
      const document = documents[Number(number) - 1];
      const citation = document && citationOf(document, claim);
      if (citation) citations.set(`${citation.documentId}:${citation.start}`, citation);
    }
  }
  return [...citations.values()];
}

/** What a chat model's text answers for the call's operation. */
export function answerOf(call: ProviderCall, text: string): Read {
  switch (call.operation) {
    case "summarize":
      return { text, citations: citationsOf(text, call.task.documents) };
    case "classify":
      return { labels: labelsIn(objectIn(text), call.task.labels), citations: [] };
    case "extract": {
      const answer = objectIn(text);
      const said = isObject(answer.fields) ? answer.fields : answer;
      return {
        fields: Object.fromEntries(call.task.fields.map((field) => [field, said[field] ?? null])),
        citations: [],
      };
    }
    case "enrich": {
      const answer = objectIn(text);
      const fields = {
        keywords: strings(answer.keywords),
        entities: strings(answer.entities),
        language: typeof answer.language === "string" ? answer.language : "und",
        summary: typeof answer.summary === "string" ? answer.summary : "",
        ...readingOf(subjectOf(call)),
      };
      return { fields, citations: [] };
    }
    default:
      return { text, citations: [] };
  }
}
