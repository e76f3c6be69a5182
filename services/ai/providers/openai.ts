import { answerOf } from "./answer.js";
import { exchange, jsonOf, unusable, type Exchange, type Usage } from "./http.js";
import { estimateTokens } from "./local/text.js";
import { promptLength, promptOf } from "./prompt.js";
import type { ModelProvider, ProviderAnswer, ProviderCall, ProviderConfig } from "./provider.js";
import { dataOf, saidOf, streamBroke, streamedText, type ServerEvent, type StreamStep } from "./sse.js";

interface CompletionUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
}
interface Completion {
  choices?: { message?: { content?: unknown } }[];
  usage?: CompletionUsage;
}
interface CompletionChunk {
  choices?: { delta?: { content?: unknown } }[];
  usage?: CompletionUsage;
  error?: { message?: unknown };
}
interface Embeddings {
  data?: { embedding?: unknown; index?: number }[];
  usage?: CompletionUsage;
}

/** The provider's counts, each estimated from the characters when it sent none. */
const usageOf = (said: CompletionUsage | undefined, input: number, output: string): Usage => ({
  inputTokens: said?.prompt_tokens ?? Math.ceil(input / 4),
  outputTokens: said?.completion_tokens ?? estimateTokens(output),
});

/**
 * The OpenAI wire format (`/chat/completions`, `/embeddings`), which vLLM, Ollama, llama.cpp and LM Studio serve
 * too: one request per call, streamed when the call takes deltas.
 */
export function openaiProvider(config: ProviderConfig): ModelProvider {
  const base = config.baseUrl.replace(/\/+$/, "");
  const headers: Record<string, string> = config.apiKey === "" ? {} : { authorization: `Bearer ${config.apiKey}` };

  async function embed(ex: Exchange, call: ProviderCall): Promise<ProviderAnswer> {
    const input = call.task.inputs.length > 0 ? call.task.inputs : [call.task.text];
    const response = await ex.post(`${base}/embeddings`, headers, { model: call.model, input });
    const body = (await jsonOf(response)) as Embeddings;
    const vectors = [...(body.data ?? [])]
      .sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
      .map((entry) => entry.embedding);
    const numeric = (vector: unknown): vector is number[] =>
      Array.isArray(vector) && vector.every((value) => typeof value === "number");
    if (vectors.length !== input.length || !vectors.every(numeric)) throw unusable("not one vector per input");
    const usage = { inputTokens: body.usage?.prompt_tokens ?? Math.ceil(input.join("").length / 4), outputTokens: 0 };
    return { embeddings: vectors, citations: [], usage, stub: false, httpStatus: response.status };
  }

  async function complete(ex: Exchange, call: ProviderCall): Promise<ProviderAnswer> {
    const prompt = promptOf(call);
    const messages =
      prompt.system === "" ? prompt.turns : [{ role: "system", content: prompt.system }, ...prompt.turns];
    const streamed = call.onDelta !== undefined;
    const response = await ex.post(`${base}/chat/completions`, headers, {
      model: call.model,
      messages,
      max_tokens: call.maxOutputTokens,
      ...(call.temperature === undefined ? {} : { temperature: call.temperature }),
      ...(prompt.json ? { response_format: { type: "json_object" } } : {}),
      ...(streamed ? { stream: true, stream_options: { include_usage: true } } : {}),
    });
    const input = promptLength(prompt);
    const { text, usage } = call.onDelta
      ? await streamedText(ex, response, input, call.onDelta, stepOf)
      : await completionOf(response, input);
    return { ...answerOf(call, text), usage, stub: false, httpStatus: response.status };
  }

  return {
    call: (call) =>
      exchange(call, config.apiKey, (ex) => (call.operation === "embed" ? embed(ex, call) : complete(ex, call))),
  };
}

async function completionOf(response: Response, input: number): Promise<{ text: string; usage: Usage }> {
  const body = (await jsonOf(response)) as Completion;
  const text = body.choices?.[0]?.message?.content;
  if (typeof text !== "string") throw unusable("no message content");
  return { text, usage: usageOf(body.usage, input, text) };
}

/** A chunk of a streamed completion: a delta, the usage (last, asked with include_usage), [DONE], or an error. */
function stepOf(event: ServerEvent): StreamStep {
  if (event.data === "[DONE]") return { done: true };
  const chunk = dataOf(event) as CompletionChunk;
  if (chunk.error) throw streamBroke(saidOf(chunk.error.message));
  const piece = chunk.choices?.[0]?.delta?.content;
  return {
    piece: typeof piece === "string" ? piece : undefined,
    inputTokens: chunk.usage?.prompt_tokens,
    outputTokens: chunk.usage?.completion_tokens,
  };
}
