import { create, getOption, type DescMessage } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { afterAll, describe, expect, it } from "vitest";
import { StoryReadResultSchema } from "../../gen/pf/news/v1/stories_pb.js";
import { markdown_of as markdownOf } from "../../gen/pf/v1/options_pb.js";
import { problemOf } from "../../services/kit/handler/problem.js";
import { modules } from "../../platform/registry.js";
import { fill } from "../../services/kit/rich-text/fields.js";
import {
  excerpt,
  excerptSourceChars,
  MARKDOWN_MAX_CHARS,
  renderMarkdown,
} from "../../services/kit/rich-text/markdown.js";
import { MarkdownRendering } from "../../services/kit/rich-text/rendering.js";
import { ByteLru } from "../../services/kit/runtime/byte-lru.js";
import { servicesOf } from "../support/access.js";
import { every } from "../support/timers.js";

/** About 200,000 characters of links, emphasis and code: a second or so of markdown-it and sanitize-html. */
const HEAVY = Array.from({ length: 4_000 }, (_, i) => `[link ${i}](https://x.example/${i}) *em* **strong** \`c\` <b>`)
  .join("\n")
  .slice(0, MARKDOWN_MAX_CHARS);

const pools: MarkdownRendering[] = [];
const rendering = (options: Partial<ConstructorParameters<typeof MarkdownRendering>[0]> = {}) => {
  const made = new MarkdownRendering({ workers: 1, budgetMs: 60_000, queue: 100, cacheBytes: 8 << 20, ...options });
  pools.push(made);
  return made;
};
afterAll(() => Promise.all(pools.map((pool) => pool.close())));

describe("Markdown rendering off the event loop (issue 24)", () => {
  it("renders on a worker thread: the event loop keeps turning while a long source renders", async () => {
    const pool = rendering();
    let turns = 0;
    const stopTurning = every(1, () => turns++);
    const html = await pool.html(HEAVY);
    stopTurning();
    // Rendered where this thread's timers could not run, its callbacks would all wait for the answer.
    expect(turns).toBeGreaterThan(0);
    expect(html).toBe(renderMarkdown(HEAVY));
    expect(pool.stats()).toMatchObject({ rendered: 1, asked: 1 });
  });

  it("ends a render past its time budget: the worker is terminated, the source answered escaped and cached", async () => {
    const pool = rendering({ budgetMs: 20 });
    const source = `${HEAVY}<script>alert(1)</script>`.slice(-MARKDOWN_MAX_CHARS);
    const html = await pool.html(source);
    expect(pool.stats()).toMatchObject({ overBudget: 1, rendered: 0 });
    expect(html.startsWith("<pre>")).toBe(true);
    expect(html).not.toContain("<script");
    expect(html).toContain("&lt;script&gt;");
    // The same text never costs a worker its budget again.
    expect(await pool.html(source)).toBe(html);
    expect(pool.stats()).toMatchObject({ overBudget: 1, asked: 1, cached: 1 });
  });

  it("renders a text once for twenty readers, and never again while it is cached", async () => {
    const pool = rendering();
    const answers = await Promise.all(Array.from({ length: 20 }, () => pool.html("**twenty** readers")));
    expect(new Set(answers)).toEqual(new Set(["<p><strong>twenty</strong> readers</p>\n"]));
    expect(pool.stats()).toMatchObject({ asked: 1, rendered: 1, cached: 19 });
    await pool.html("**twenty** readers");
    expect(pool.stats()).toMatchObject({ asked: 1, rendered: 1, cached: 20 });
  });

  it("bounds the queue: a render past it is refused 503 rendering.busy, the others answer", async () => {
    const pool = rendering({ queue: 2 });
    const asked = ["*a*", "*b*", "*c*"].map((source) => pool.html(source).then(String, (error: unknown) => error));
    const [a, b, c] = await Promise.all(asked);
    expect([a, b]).toEqual(["<p><em>a</em></p>\n", "<p><em>b</em></p>\n"]);
    expect(c).toBeInstanceOf(ConnectError);
    expect(problemOf(c)).toMatchObject({ status: 503, code: "rendering.busy" });
  });

  it("never parses a source past the size budget, and an excerpt only the head it needs", async () => {
    const long = `**not bold** <i>${"x".repeat(MARKDOWN_MAX_CHARS)}`;
    expect(renderMarkdown(long)).toBe(`<pre>**not bold** &lt;i&gt;${"x".repeat(MARKDOWN_MAX_CHARS)}</pre>`);
    const pool = rendering();
    const head = "Words *that* open the text. ".repeat(100);
    const first = await pool.excerpt(`${head}${"a".repeat(500_000)}`, 50);
    // What lies past the head is never sent to a worker: another tail is the same excerpt, already rendered.
    expect(await pool.excerpt(`${head}${"b".repeat(900_000)}`, 50)).toBe(first);
    expect(first).toBe(excerpt(head, 50));
    expect(head.length).toBeGreaterThan(excerptSourceChars(50));
    expect(pool.stats()).toMatchObject({ asked: 1, cached: 1 });
  });
});

describe("declared HTML fields (markdown_of)", () => {
  it("are filled with the kit's rendering in nested, repeated and oneof messages, replacing anything set", async () => {
    const answer = create(StoryReadResultSchema, {
      result: {
        case: "revision",
        value: {
          headline: { text: "**Head**", html: "<script>forged</script>" },
          paragraphs: [{ text: "[x](javascript:alert(1)) one" }, { text: "_two_" }],
          timeline: [{ text: "`three`" }],
        },
      },
    });
    await fill(StoryReadResultSchema, answer);
    const revision = answer.result.case === "revision" ? answer.result.value : undefined;
    expect(revision?.headline?.html).toBe("<p><strong>Head</strong></p>\n");
    expect(revision?.paragraphs.map((p) => p.html)).toEqual([
      renderMarkdown("[x](javascript:alert(1)) one"),
      renderMarkdown("_two_"),
    ]);
    expect(revision?.paragraphs[0].html).not.toContain("href");
    expect(revision?.timeline[0].html).toBe(renderMarkdown("`three`"));
  });

  it("are declared on every HTML field an RPC answers, so none is left empty or filled by hand", () => {
    const undeclared: string[] = [];
    const seen = new Set<DescMessage>();
    const walk = (message: DescMessage) => {
      if (seen.has(message) || message.typeName.startsWith("google.")) return;
      seen.add(message);
      for (const field of message.fields) {
        if (field.fieldKind === "scalar" && /(^|_)html$/.test(field.name) && getOption(field, markdownOf) === "")
          undeclared.push(`${message.typeName}.${field.name}`);
        if (field.message) walk(field.message);
      }
    };
    for (const module of modules)
      for (const service of servicesOf(module.key)) for (const method of service.methods) walk(method.output);
    expect(seen.size).toBeGreaterThan(100);
    expect(undeclared).toEqual([]);
  });
});

describe("ByteLru", () => {
  it("keeps what fits in its bytes, dropping the least recently used first, and never an entry past the bound", () => {
    const lru = new ByteLru(40);
    lru.set("a", "1234");
    lru.set("b", "1234");
    expect(lru.bytes).toBe(20);
    lru.get("a");
    lru.set("c", "1234567890");
    expect([lru.get("a"), lru.get("b"), lru.get("c")]).toEqual(["1234", undefined, "1234567890"]);
    expect(lru.bytes).toBe(32);
    lru.set("d", "x".repeat(20));
    expect(lru.get("d")).toBeUndefined();
    expect(lru.bytes).toBe(32);
  });
});
