import { describe, expect, it } from "vitest";
import { adapterOf } from "../../services/ai/providers/index.js";
import { ProviderFailure, type ProviderCall } from "../../services/ai/providers/provider.js";
import { callOf, rejectionOf } from "./support/provider-call.js";

const local = adapterOf({ key: "local", kind: "local", baseUrl: "", apiKey: "" });
const run = (call: ProviderCall) => local.call(call);

const documents = [
  {
    id: "news_1",
    url: "https://news.example/1",
    title: "Bitcoin",
    text:
      "Bitcoin rallied to a new high on Monday. Analysts said bitcoin demand from ETF buyers drove the bitcoin rally. " +
      "The weather in Lisbon was mild. Some traders expect bitcoin volatility to return.",
  },
  {
    id: "news_2",
    url: "https://news.example/2",
    title: "Rates",
    text: "The central bank kept rates unchanged. Bitcoin traders watched the rates decision closely.",
  },
];

const cosine = (a: number[], b: number[]) => a.reduce((sum, value, index) => sum + value * b[index], 0);

describe("the local provider", () => {
  it("answers every call the same way, always marked as a stub", async () => {
    const call = callOf({ operation: "summarize", task: { documents } });
    const first = await run(call);
    expect(await run(call)).toEqual(first);
    expect(first.stub).toBe(true);
    for (const operation of ["chat", "generate", "classify", "extract", "enrich", "embed"] as const) {
      const answer = await run(
        callOf({ operation, messages: [{ role: "user", content: "Hi there." }], task: { text: "Hi there." } }),
      );
      expect(answer.stub).toBe(true);
    }
  });

  it("summarizes extractively: the top three sentences in reading order, each cited with exact offsets", async () => {
    const answer = await run(callOf({ operation: "summarize", task: { documents } }));
    expect(answer.citations).toHaveLength(3);
    for (const citation of answer.citations) {
      const document = documents.find((candidate) => candidate.id === citation.documentId);
      expect(document?.url).toBe(citation.url);
      expect(document?.text.slice(citation.start, citation.end)).toBe(citation.quote);
    }
    expect(answer.citations.map((citation) => citation.quote)).not.toContain("The weather in Lisbon was mild.");
    const marked = answer.citations.map((c) => `${c.quote} [${documents.findIndex((d) => d.id === c.documentId) + 1}]`);
    expect(answer.text).toBe(marked.join(" "));
  });

  it("summarizes within the output budget, one sentence at least", async () => {
    const answer = await run(callOf({ operation: "summarize", maxOutputTokens: 1, task: { documents } }));
    expect(answer.citations).toHaveLength(1);
  });

  it("generates deterministic stub text from the instruction and the prompt", async () => {
    const call = callOf({
      operation: "chat",
      instruction: "Answer as a market analyst. Use short sentences.",
      messages: [
        { role: "user", content: "Ignore this earlier turn." },
        { role: "assistant", content: "Fine." },
        { role: "user", content: "Why did bitcoin rally? Bitcoin demand grew." },
      ],
    });
    const answer = await run(call);
    expect(answer.text).toBe("[stub answer] Answer as a market analyst. Why did bitcoin rally? Bitcoin demand grew.");
    expect(answer.usage.outputTokens).toBe(Math.ceil((answer.text ?? "").length / 4));
  });

  it("streams its text in word-sized pieces", async () => {
    const pieces: string[] = [];
    const answer = await run(
      callOf({ operation: "generate", task: { text: "Tell me about rates." }, onDelta: (p) => pieces.push(p) }),
    );
    expect(pieces.length).toBeGreaterThan(3);
    expect(pieces.join("")).toBe(answer.text);
    expect(pieces.every((piece) => piece.trim().split(/\s+/).length === 1)).toBe(true);
  });

  it("estimates usage as characters / 4 in and out", async () => {
    const text = "a".repeat(41);
    const answer = await run(callOf({ operation: "classify", task: { text, labels: ["x"] } }));
    // The text, a line break and the label: 43 characters.
    expect(answer.usage.inputTokens).toBe(11);
    expect(answer.usage.outputTokens).toBe(Math.ceil(JSON.stringify(answer.labels).length / 4));
  });

  it("classifies by overlap with each label's words: 0..1, best first, ties in label order", async () => {
    const answer = await run(
      callOf({
        operation: "classify",
        task: {
          text: "Prices fell as sellers dumped coins; the price drop deepened.",
          labels: ["sports", "price_drop", "seller", "weather"],
        },
      }),
    );
    expect(answer.labels?.map((entry) => entry.label)).toEqual(["price_drop", "seller", "sports", "weather"]);
    expect(answer.labels?.[0].score).toBeGreaterThan(answer.labels?.[1].score ?? 1);
    expect(answer.labels?.[2].score).toBe(0);
    expect(answer.labels?.reduce((sum, entry) => sum + entry.score, 0)).toBeCloseTo(1, 3);
  });

  it("extracts emails, urls, dates, amounts and field: value lines; null when absent", async () => {
    const text = [
      "Order: A-1042",
      "Contact ops@shop.example or see https://shop.example/orders/1042.",
      "Shipped on 5 March 2026, total $1,250.50.",
    ].join("\n");
    const answer = await run(
      callOf({
        operation: "extract",
        task: { text, fields: ["order", "email", "website", "ship_date", "total", "phone"] },
      }),
    );
    expect(answer.fields).toEqual({
      order: "A-1042",
      email: "ops@shop.example",
      website: "https://shop.example/orders/1042",
      ship_date: "2026-03-05",
      total: "$1,250.50",
      phone: null,
    });
    const dates = await run(
      callOf({ operation: "extract", task: { text: "Due 12/25/2026 or 2026-01-02.", fields: ["due_date"] } }),
    );
    expect(dates.fields).toEqual({ due_date: "2026-12-25" });
  });

  it("enriches with keywords, entities, language, summary, word count and reading time", async () => {
    const text =
      "The European Central Bank raised rates. Christine Lagarde said rates stay high while inflation persists.";
    const answer = await run(callOf({ operation: "enrich", task: { text } }));
    expect(answer.fields).toMatchObject({ language: "en", word_count: 15, reading_time_seconds: 5 });
    expect(answer.fields?.keywords).toEqual(expect.arrayContaining(["rates"]));
    expect((answer.fields?.keywords as string[])[0]).toBe("rates");
    expect(answer.fields?.entities).toEqual(["European Central Bank", "Christine Lagarde"]);
    const languages = {
      de: "Die Zentralbank hat die Zinsen nicht verändert, und das ist für den Markt gut.",
      fr: "La banque centrale a laissé les taux inchangés et le marché est calme pour la semaine.",
      es: "El banco central mantuvo las tasas y el mercado está tranquilo para la semana.",
      it: "La banca centrale non ha cambiato i tassi e il mercato è calmo per la settimana.",
      nl: "De centrale bank heeft de rente niet veranderd en het is rustig op de markt.",
    };
    for (const [language, sample] of Object.entries(languages)) {
      const enriched = await run(callOf({ operation: "enrich", task: { text: sample } }));
      expect(enriched.fields?.language, sample).toBe(language);
    }
  });

  it("embeds into 256 unit-length dimensions where a paraphrase is nearer than an unrelated text", async () => {
    const inputs = [
      "The central bank raised interest rates to fight inflation.",
      "Interest rates were raised by the central bank against inflation.",
      "My cat sleeps on the warm windowsill all afternoon.",
    ];
    const answer = await run(callOf({ operation: "embed", task: { inputs } }));
    const [original, paraphrase, unrelated] = answer.embeddings ?? [];
    expect(original).toHaveLength(256);
    expect(cosine(original, original)).toBeCloseTo(1, 9);
    expect(cosine(original, paraphrase)).toBeGreaterThan(0.6);
    expect(cosine(original, paraphrase)).toBeGreaterThan(cosine(original, unrelated) + 0.4);
    expect(answer.usage.outputTokens).toBe(0);
  });

  it("fails a call whose run is already canceled", async () => {
    const abort = new AbortController();
    abort.abort();
    const failure = await rejectionOf(
      run(callOf({ operation: "generate", task: { text: "x" }, signal: abort.signal })),
    );
    expect(failure).toBeInstanceOf(ProviderFailure);
    expect((failure as ProviderFailure).code).toBe("ai.run_canceled");
  });
});
