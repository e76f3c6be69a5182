import { createHash } from "node:crypto";
import { availableParallelism } from "node:os";
import { ByteLru } from "../runtime/byte-lru.js";
import { wholeSetting } from "../runtime/whole-setting.js";
import { collapsed, excerptSourceChars, preformatted } from "./markdown.js";
import { RenderPool, type PoolOptions, type RenderKind } from "./pool.js";

export interface RenderingOptions extends PoolOptions {
  /** Bytes of rendered text the cache holds at most. */
  cacheBytes: number;
}

/**
 * Markdown as readers get it (README "Rich text"): rendered on a worker thread, never on the event loop, and
 * cached by the digest of what is rendered in a byte-bounded LRU, so a text already rendered costs no Markdown
 * work and twenty readers of one text wait for one render. A render past its time budget answers the
 * fallback (the source escaped in `<pre>`, or as it is for plain text), which is cached like a render: the same
 * text never costs a worker its budget twice. Sources past `MARKDOWN_MAX_CHARS` are never parsed (markdown.ts).
 */
export class MarkdownRendering {
  private readonly pool: RenderPool;
  private readonly cache: ByteLru;
  private readonly inFlight = new Map<string, Promise<string>>();
  /** Answers from the cache (or a render already in flight), and renders asked of the pool. */
  readonly counts = { cached: 0, asked: 0 };

  constructor(options: RenderingOptions) {
    this.pool = new RenderPool(options);
    this.cache = new ByteLru(options.cacheBytes);
  }

  /** Sanitised HTML of a Markdown source (`renderMarkdown`). */
  html(source: string): Promise<string> {
    return this.rendered("html", source, undefined, preformatted);
  }

  /** The source's text without markup, whitespace collapsed (`plainText`). */
  text(source: string): Promise<string> {
    return this.rendered("text", source, undefined, collapsed);
  }

  /** At most `maxChars` characters of the source's plain text, cut at a word (`excerpt`). */
  excerpt(source: string, maxChars: number): Promise<string> {
    // Only the part an excerpt reads is sent, hashed and kept apart.
    const head = source.slice(0, excerptSourceChars(maxChars));
    return this.rendered("excerpt", head, maxChars, (text) => {
      const plain = collapsed(text);
      return plain.length <= maxChars ? plain : `${plain.slice(0, Math.max(0, maxChars - 1))}…`;
    });
  }

  /** What the pool and cache did: renders answered by a worker, ended past their budget, cache hits. */
  stats() {
    return { ...this.pool.counts, ...this.counts, cacheBytes: this.cache.bytes };
  }

  /** Forgets every text rendered, as a process just started has none (tests of a cold start). */
  forget(): void {
    this.cache.clear();
  }

  /** Ends the worker threads (they start again on the next render). */
  close(): Promise<void> {
    return this.pool.close();
  }

  private async rendered(
    kind: RenderKind,
    source: string,
    maxChars: number | undefined,
    fallback: (source: string) => string,
  ): Promise<string> {
    if (source === "") return "";
    const key = `${kind}:${maxChars ?? ""}:${createHash("sha256").update(source).digest("base64url")}`;
    const known = this.cache.get(key) ?? this.inFlight.get(key);
    if (known !== undefined) {
      this.counts.cached++;
      return known;
    }
    this.counts.asked++;
    const rendering = this.pool
      .run(kind, source, maxChars)
      .then((text) => {
        const answer = text ?? fallback(source);
        this.cache.set(key, answer);
        return answer;
      })
      .finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, rendering);
    return rendering;
  }
}

let shared: MarkdownRendering | undefined;

/**
 * The process's rendering: one pool for every service in the process (they share its event loop and cores),
 * with its settings read from the environment on first use (README "Rich text").
 */
export function markdownRendering(): MarkdownRendering {
  return (shared ??= new MarkdownRendering(renderingSettings(process.env)));
}

/** PF_MARKDOWN_WORKERS (one less than the cores, at least 1), _BUDGET_MS (5000), _QUEUE (1000), _CACHE_BYTES (64 MiB). */
export function renderingSettings(env: Record<string, string | undefined>): RenderingOptions {
  return {
    workers: wholeSetting(env, "PF_MARKDOWN_WORKERS", Math.max(1, availableParallelism() - 1), 1),
    budgetMs: wholeSetting(env, "PF_MARKDOWN_BUDGET_MS", 5_000, 1),
    queue: wholeSetting(env, "PF_MARKDOWN_QUEUE", 1_000, 1),
    cacheBytes: wholeSetting(env, "PF_MARKDOWN_CACHE_BYTES", 64 * 1024 * 1024, 0),
  };
}
