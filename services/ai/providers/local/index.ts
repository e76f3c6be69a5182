import { subjectOf } from "../prompt.js";
import { ProviderFailure, type ModelProvider, type ProviderAnswer, type ProviderCall } from "../provider.js";
import { classify } from "./classify.js";
import { embed } from "./embed.js";
import { enrich } from "./enrich.js";
import { extract } from "./extract.js";
import { generate } from "./generate.js";
import { summarize } from "./summarize.js";
import { estimateTokens, wordPieces } from "./text.js";

type Outcome = Omit<ProviderAnswer, "usage" | "stub" | "citations"> & Partial<Pick<ProviderAnswer, "citations">>;

function outcomeOf(call: ProviderCall): Outcome {
  switch (call.operation) {
    case "chat":
    case "generate":
      return { text: generate(call) };
    case "summarize":
      return summarize(call);
    case "classify":
      return { labels: classify(subjectOf(call), call.task.labels) };
    case "extract":
      return { fields: extract(subjectOf(call), call.task.fields) };
    case "enrich":
      return { fields: enrich(subjectOf(call)) };
    case "embed":
      return { embeddings: (call.task.inputs.length > 0 ? call.task.inputs : [call.task.text]).map(embed) };
  }
}

/** Everything a call gives the provider to read, for the token estimate. */
const inputOf = (call: ProviderCall): string =>
  [
    call.instruction,
    ...call.messages.map((turn) => turn.content),
    call.task.text,
    ...call.task.documents.map((document) => document.text),
    ...call.task.labels,
    ...call.task.fields,
    ...call.task.inputs,
  ]
    .filter((part) => part !== "")
    .join("\n");

/**
 * The deterministic local provider: computed in process, the same call always answering the same, every answer
 * marked `stub` (it is not a model). Tokens are estimated at four characters each; text streams word by word.
 */
export const localProvider: ModelProvider = {
  call(call) {
    if (call.signal.aborted) {
      return Promise.reject(
        new ProviderFailure("ai.run_canceled", "the run was canceled", { retryable: false, breaker: false }),
      );
    }
    const outcome = outcomeOf(call);
    if (outcome.text !== undefined && call.onDelta) wordPieces(outcome.text).forEach(call.onDelta);
    const structured = outcome.labels ?? outcome.fields;
    const output = outcome.text ?? (structured ? JSON.stringify(structured) : "");
    return Promise.resolve({
      citations: [],
      ...outcome,
      usage: { inputTokens: estimateTokens(inputOf(call)), outputTokens: estimateTokens(output) },
      stub: true,
    });
  },
};
