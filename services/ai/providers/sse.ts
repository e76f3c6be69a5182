import { chunksOf, type Exchange, type Usage } from "./http.js";
import { estimateTokens } from "./local/text.js";
import { ProviderFailure } from "./provider.js";

/** One server-sent event: its type (`message` when unnamed) and its data lines joined. */
export interface ServerEvent {
  event: string;
  data: string;
}

/**
 * The events of a text/event-stream body, bounded like every answer. An event is dispatched at its blank line; one
 * the stream cuts off before it is not (as the EventSource standard has it).
 */
export async function* serverEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let event = "";
  let data: string[] = [];
  for await (const chunk of chunksOf(body)) {
    buffer += decoder.decode(chunk, { stream: true });
    // A \r at the very end may be the first half of \r\n: it waits for the next chunk.
    for (let end = buffer.search(/\r\n|\n|\r(?!$)/); end >= 0; end = buffer.search(/\r\n|\n|\r(?!$)/)) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
      if (line === "") {
        if (data.length > 0) yield { event: event || "message", data: data.join("\n") };
        event = "";
        data = [];
        continue;
      }
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
      if (field === "data") data.push(value);
      else if (field === "event") event = value;
    }
  }
}

/** What one event of a provider's stream says. */
export interface StreamStep {
  piece?: string;
  inputTokens?: number;
  outputTokens?: number;
  /** The stream's own end ([DONE], message_stop): the answer is whole. */
  done?: boolean;
}

/** A stream the provider broke on purpose (an error event) or by a chunk no one can read. */
export const streamBroke = (message: string): ProviderFailure =>
  new ProviderFailure("ai.stream_interrupted", message, { retryable: false, breaker: true });

/** The message of an error event, when it has one. */
export const saidOf = (message: unknown): string =>
  typeof message === "string" && message !== "" ? message : "the provider sent an error";

/** An event's data as JSON. */
export function dataOf(event: ServerEvent): unknown {
  try {
    return JSON.parse(event.data) as unknown;
  } catch {
    throw streamBroke("the provider sent a chunk that is not JSON");
  }
}

/**
 * A streamed answer's text, each piece handed on as it comes, and its usage (estimated from the characters where
 * the provider counted none). A stream that breaks, or ends before its own end, fails with what it delivered.
 */
export async function streamedText(
  ex: Exchange,
  response: Response,
  inputChars: number,
  onDelta: (text: string) => void,
  step: (event: ServerEvent) => StreamStep,
): Promise<{ text: string; usage: Usage }> {
  let text = "";
  const said: { inputTokens?: number; outputTokens?: number } = {};
  const sofar = () => ({
    text,
    usage: {
      inputTokens: said.inputTokens ?? Math.ceil(inputChars / 4),
      outputTokens: said.outputTokens ?? estimateTokens(text),
    },
  });
  try {
    for await (const event of serverEvents(response.body ?? new ReadableStream())) {
      const { piece, inputTokens, outputTokens, done } = step(event);
      if (piece) {
        text += piece;
        onDelta(piece);
      }
      said.inputTokens = inputTokens ?? said.inputTokens;
      said.outputTokens = outputTokens ?? said.outputTokens;
      if (done) return sofar();
    }
  } catch (error) {
    throw ex.streamFailureOf(error, sofar());
  }
  throw ex.streamFailureOf(streamBroke("the stream ended before the answer did"), sofar());
}
