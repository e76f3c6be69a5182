import type { Citation, ProviderCall } from "../provider.js";
import { salientSentences } from "./salience.js";
import { estimateTokens } from "./text.js";

/** The most sentences an extractive summary takes. */
const SUMMARY_SENTENCES = 3;

/**
 * Extractive: the most salient sentences of the documents (or the text), in reading order, each followed by its
 * document's [n] marker and cited with the sentence's exact offsets; as many as the output budget allows, at least one.
 */
export function summarize(call: ProviderCall): { text: string; citations: Citation[] } {
  const { documents } = call.task;
  const texts = documents.length > 0 ? documents.map((document) => document.text) : [call.task.text];
  const parts: string[] = [];
  const citations: Citation[] = [];
  for (const { source, sentence } of salientSentences(texts, SUMMARY_SENTENCES)) {
    const document = documents[source];
    const part = document ? `${sentence.text} [${source + 1}]` : sentence.text;
    if (parts.length > 0 && estimateTokens([...parts, part].join(" ")) > call.maxOutputTokens) break;
    parts.push(part);
    if (document) {
      const { text: quote, start, end } = sentence;
      citations.push({ documentId: document.id, url: document.url, quote, start, end });
    }
  }
  return { text: parts.join(" "), citations };
}
