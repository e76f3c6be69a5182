import { answerOf } from "./answer.js";
import { exchange, jsonOf, unusable, type Exchange } from "./http.js";
import { estimateTokens } from "./local/text.js";
import { promptLength, promptOf } from "./prompt.js";
import {
  ProviderFailure,
  type ModelProvider,
  type ProviderAnswer,
  type ProviderCall,
  type ProviderConfig,
} from "./provider.js";
import { dataOf, saidOf, streamBroke, streamedText, type ServerEvent, type StreamStep } from "./sse.js";

const VERSION = "2023-06-01";

interface MessageUsage {
  input_tokens?: number;
  output_tokens?: number;
}
interface Message {
  content?: { type?: string; text?: unknown }[];
  usage?: MessageUsage;
}
interface MessageEvent {
  type?: string;
  message?: { usage?: MessageUsage };
  delta?: { type?: string; text?: unknown };
  usage?: MessageUsage;
  error?: { message?: unknown };
}

/** An event of a streamed message: its start (input tokens), text deltas, its usage so far, its stop, or an error. */
function stepOf(event: ServerEvent): StreamStep {
  const data = dataOf(event) as MessageEvent;
  switch (data.type) {
    case "message_start":
      return { inputTokens: data.message?.usage?.input_tokens, outputTokens: data.message?.usage?.output_tokens };
    case "content_block_delta":
      return {
        piece: data.delta?.type === "text_delta" && typeof data.delta.text === "string" ? data.delta.text : undefined,
      };
    case "message_delta":
      return { inputTokens: data.usage?.input_tokens, outputTokens: data.usage?.output_tokens };
    case "message_stop":
      return { done: true };
    case "error":
      throw streamBroke(saidOf(data.error?.message));
    default:
      return {};
  }
}

/** Anthropic's Messages API: the system text top-level, the turns as messages, streamed when the call takes deltas. */
export function anthropicProvider(config: ProviderConfig): ModelProvider {
  const url = `${config.baseUrl.replace(/\/+$/, "")}/messages`;
  const headers: Record<string, string> = {
    "anthropic-version": VERSION,
    ...(config.apiKey === "" ? {} : { "x-api-key": config.apiKey }),
  };

  async function complete(ex: Exchange, call: ProviderCall): Promise<ProviderAnswer> {
    const prompt = promptOf(call);
    const response = await ex.post(url, headers, {
      model: call.model,
      max_tokens: call.maxOutputTokens,
      messages: prompt.turns,
      ...(prompt.system === "" ? {} : { system: prompt.system }),
      ...(call.temperature === undefined ? {} : { temperature: call.temperature }),
      ...(call.onDelta ? { stream: true } : {}),
    });
    const input = promptLength(prompt);
    const { text, usage } = call.onDelta
      ? await streamedText(ex, response, input, call.onDelta, stepOf)
      : await messageOf(response, input);
    return { ...answerOf(call, text), usage, stub: false, httpStatus: response.status };
  }

  return {
    call(call) {
      if (call.operation === "embed") {
        const failure = new ProviderFailure("ai.provider_refused", "Anthropic serves no embeddings", {
          retryable: false,
          breaker: false,
        });
        return Promise.reject(failure);
      }
      return exchange(call, config.apiKey, (ex) => complete(ex, call));
    },
  };
}

async function messageOf(response: Response, input: number) {
  const body = (await jsonOf(response)) as Message;
  if (!Array.isArray(body.content)) throw unusable("no content");
  const text = body.content
    .map((block) => (block.type === "text" && typeof block.text === "string" ? block.text : ""))
    .join("");
  const usage = {
    inputTokens: body.usage?.input_tokens ?? Math.ceil(input / 4),
    outputTokens: body.usage?.output_tokens ?? estimateTokens(text),
  };
  return { text, usage };
}
