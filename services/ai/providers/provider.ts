import type { Operation } from "../domain/operations.js";

/** A document a run cites by its id. */
export interface SourceDocument {
  id: string;
  text: string;
  url: string;
  title: string;
}

/** A passage of the answer drawn from a document (UTF-16 offsets into its text, end exclusive). */
export interface Citation {
  documentId: string;
  url: string;
  quote: string;
  start: number;
  end: number;
}

export interface ChatTurn {
  role: "system" | "user" | "assistant";
  content: string;
}

/**
 * One call to one model of one provider: exactly one HTTP request for a remote provider (the engine retries, falls
 * back, and counts each call), computed in process for the local one.
 */
export interface ProviderCall {
  operation: Operation;
  /** The provider's own name of the model (`gpt-4o-mini`, `extractive`). */
  model: string;
  /** A workflow's rendered prompt template: the instruction the operation runs under ("" for none). */
  instruction: string;
  /** chat: the conversation; other operations build their own messages from `task`. */
  messages: ChatTurn[];
  /** What the operation works on. */
  task: {
    text: string;
    documents: SourceDocument[];
    labels: string[];
    fields: string[];
    inputs: string[];
  };
  maxOutputTokens: number;
  temperature?: number;
  /** The call's time limit (the provider's timeout_ms): past it the call fails with `ai.provider_timeout`. */
  timeoutMs: number;
  /** Aborted when the run is canceled: the call stops and fails with `ai.run_canceled`. */
  signal: AbortSignal;
  /** Called with each piece of text as the provider streams it (chat streams); the answer still resolves whole. */
  onDelta?: (text: string) => void;
}

/** What a call produced. */
export interface ProviderAnswer {
  /** chat, generate, summarize (and a workflow's text). */
  text?: string;
  /** classify: every label with its score 0..1, best first. */
  labels?: { label: string; score: number }[];
  /** extract: each field's value (null when absent); enrich: keywords, entities, language, reading time. */
  fields?: Record<string, unknown>;
  /** embed: one vector per input. */
  embeddings?: number[][];
  citations: Citation[];
  usage: { inputTokens: number; outputTokens: number };
  /** Served by the deterministic local provider, not a model. */
  stub: boolean;
  /** The provider's HTTP status (remote providers). */
  httpStatus?: number;
}

/** Why a call failed, in the codes runs and request logs carry. */
export type FailureCode =
  | "ai.provider_timeout"
  | "ai.provider_rate_limited"
  | "ai.provider_failed"
  | "ai.provider_refused"
  | "ai.stream_interrupted"
  | "ai.run_canceled";

/**
 * A failed call. `retryable`: a 429, a 5xx, a timeout or a connection failure (the engine retries after backoff,
 * honouring `retryAfterMs`). `breaker`: the failure counts towards the provider's circuit breaker (5xx, timeouts,
 * connection failures, broken streams; not a 429 nor a 4xx the request caused). `partial`: what a broken stream
 * delivered before it broke, with the usage it cost.
 */
export class ProviderFailure extends Error {
  constructor(
    readonly code: FailureCode,
    message: string,
    readonly options: {
      retryable: boolean;
      breaker: boolean;
      httpStatus?: number;
      retryAfterMs?: number;
      partial?: { text: string; usage: { inputTokens: number; outputTokens: number } };
    },
  ) {
    super(message);
  }
}

/** A provider adapter: the kind's wire format behind one method. */
export interface ModelProvider {
  call(call: ProviderCall): Promise<ProviderAnswer>;
}

/** What an adapter is built from: the provider's row, with its API key read from the environment it names. */
export interface ProviderConfig {
  key: string;
  kind: "openai" | "anthropic" | "local";
  baseUrl: string;
  /** The key's value, read from `api_key_env` in this process ("" when none): never stored, logged or echoed. */
  apiKey: string;
}
