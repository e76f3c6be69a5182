import { ProviderFailure, type ProviderCall } from "./provider.js";

/** The most of one answer read: a broken or hostile server cannot fill the memory. */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
/** The longest provider message a failure repeats. */
const MESSAGE_CHARS = 300;

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

/** The chunks of a body, failing once they pass `limit` bytes (the rest is not read). */
export async function* chunksOf(
  body: ReadableStream<Uint8Array>,
  limit = MAX_ANSWER_BYTES,
): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      total += value.byteLength;
      if (total > limit) {
        throw new ProviderFailure("ai.provider_failed", `the provider's answer passed ${limit} bytes`, {
          retryable: false,
          breaker: true,
        });
      }
      yield value;
    }
  } finally {
    // Stops the transfer when the reader leaves early (too large, [DONE] seen, a failure).
    void reader.cancel().catch(() => undefined);
  }
}

/** A whole body as text, bounded. */
export async function textOf(response: Response, limit = MAX_ANSWER_BYTES): Promise<string> {
  if (!response.body) return "";
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of chunksOf(response.body, limit)) text += decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
}

/** How long a provider asks to be left alone: `retry-after-ms`, else `retry-after` in seconds or as an HTTP date. */
export function retryAfterOf(headers: Headers, now = Date.now()): number | undefined {
  const ms = Number(headers.get("retry-after-ms") ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return Math.ceil(ms);
  const value = headers.get("retry-after")?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** An answer the adapter cannot use: the provider's fault, but no reason to stop calling it. */
export const unusable = (what: string): ProviderFailure =>
  new ProviderFailure("ai.provider_failed", `the provider's answer is unusable: ${what}`, {
    retryable: false,
    breaker: false,
  });

/** The JSON of a body, bounded. */
export async function jsonOf(response: Response): Promise<unknown> {
  const text = await textOf(response);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw unusable("not JSON");
  }
}

/**
 * One HTTP exchange with a provider under the call's time limit and cancellation: every way it can fail becomes a
 * ProviderFailure, and the provider's words are trimmed and never carry the API key back.
 */
export class Exchange {
  private readonly controller = new AbortController();
  private timedOut = false;
  private readonly timer: NodeJS.Timeout;
  private readonly cancel = () => this.controller.abort();

  constructor(
    private readonly call: Pick<ProviderCall, "timeoutMs" | "signal">,
    private readonly apiKey: string,
  ) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort();
    }, call.timeoutMs);
    if (call.signal.aborted) this.controller.abort();
    else call.signal.addEventListener("abort", this.cancel, { once: true });
  }

  /** Sends a JSON body; an answer that is not 2xx fails as its status says. */
  async post(url: string, headers: Record<string, string>, body: unknown): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
        signal: this.controller.signal,
        redirect: "error",
      });
    } catch (error) {
      throw this.failureOf(error);
    }
    if (!response.ok) throw await this.refusalOf(response);
    return response;
  }

  /** What a thrown error means: canceled, timed out, or the connection failing (mid-stream: the stream broke). */
  failureOf(error: unknown, partial?: { text: string; usage: Usage }): ProviderFailure {
    if (this.call.signal.aborted) {
      return new ProviderFailure("ai.run_canceled", "the run was canceled", {
        retryable: false,
        breaker: false,
        partial,
      });
    }
    if (this.timedOut) {
      const detail = `the provider did not answer within ${this.call.timeoutMs} ms`;
      return new ProviderFailure("ai.provider_timeout", detail, { retryable: true, breaker: true, partial });
    }
    if (error instanceof ProviderFailure) return error;
    const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code;
    const detail = `the connection to the provider failed${typeof cause === "string" ? ` (${cause})` : ""}`;
    return partial
      ? new ProviderFailure("ai.stream_interrupted", detail, { retryable: false, breaker: true, partial })
      : new ProviderFailure("ai.provider_failed", detail, { retryable: true, breaker: true });
  }

  /** A stream broken off: canceled or timed out as the exchange knows, else interrupted; with what it delivered. */
  streamFailureOf(error: unknown, partial: { text: string; usage: Usage }): ProviderFailure {
    const failure = this.failureOf(error, partial);
    if (failure.options.partial) return failure;
    return new ProviderFailure("ai.stream_interrupted", failure.message, { retryable: false, breaker: true, partial });
  }

  /** A failed status: 429 rate limited, 5xx failed (both retryable), any other 4xx refused. */
  private async refusalOf(response: Response): Promise<ProviderFailure> {
    const httpStatus = response.status;
    const retryAfterMs = retryAfterOf(response.headers);
    const message = await this.messageOf(response);
    if (httpStatus === 429) {
      return new ProviderFailure("ai.provider_rate_limited", message, {
        retryable: true,
        breaker: false,
        httpStatus,
        retryAfterMs,
      });
    }
    if (httpStatus >= 500) {
      return new ProviderFailure("ai.provider_failed", message, {
        retryable: true,
        breaker: true,
        httpStatus,
        retryAfterMs,
      });
    }
    return new ProviderFailure("ai.provider_refused", message, { retryable: false, breaker: false, httpStatus });
  }

  /** The provider's `error.message` (OpenAI and Anthropic both send one; Ollama a string `error`), trimmed. */
  private async messageOf(response: Response): Promise<string> {
    let message = `the provider answered HTTP ${response.status}`;
    try {
      const body = JSON.parse(await textOf(response, 64 * 1024)) as { error?: { message?: unknown } | string };
      const said = typeof body.error === "string" ? body.error : body.error?.message;
      if (typeof said === "string" && said.trim() !== "") message = said.trim();
    } catch {
      // No JSON or no message: the status says it.
    }
    if (this.apiKey !== "") message = message.split(this.apiKey).join("[key]");
    return message.length > MESSAGE_CHARS ? `${message.slice(0, MESSAGE_CHARS - 1)}…` : message;
  }

  finish(): void {
    clearTimeout(this.timer);
    this.call.signal.removeEventListener("abort", this.cancel);
  }
}

/** Runs `work` as one exchange, whatever it throws turned into a ProviderFailure. */
export async function exchange<T>(
  call: Pick<ProviderCall, "timeoutMs" | "signal">,
  apiKey: string,
  work: (exchange: Exchange) => Promise<T>,
): Promise<T> {
  const attempt = new Exchange(call, apiKey);
  try {
    return await work(attempt);
  } catch (error) {
    // A failure already read (a stream's, with what it delivered) stays as it is.
    throw error instanceof ProviderFailure ? error : attempt.failureOf(error);
  } finally {
    attempt.finish();
  }
}
