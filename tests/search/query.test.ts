import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { doc, ownerToken, put, query } from "./support.js";

const t = usePlatform({ services: ["search"], env: { PF_SEARCH_ANONYMOUS_PER_MINUTE: "100000" } });
const type = `q${Date.now().toString(36)}`;
const scope = `owner=coupons&type=${type}`;
const ids = (answer: { body: { results?: { id: string }[] } }) => (answer.body.results ?? []).map((row) => row.id);

beforeAll(async () => {
  const token = await ownerToken(t);
  const write = (id: string, fields: Record<string, unknown>) => put(t, token, { type, id }, 1, doc(fields));
  await write("running", {
    title: "Running shoes sale",
    body: "Trail runners for every road",
    lang: "en",
    facets: { merchant: { values: ["acme"] } },
    published_at: "2026-01-01T00:00:00Z",
  });
  await write("cafe", {
    title: "Café crème voucher",
    body: "Coffee at the Straße café",
    lang: "fr",
    facets: { merchant: { values: ["bean"] } },
    published_at: "2026-02-01T00:00:00Z",
  });
  await write("red", {
    title: "Red umbrella",
    body: "umbrella shoes",
    facets: { merchant: { values: ["acme"] }, color: { values: ["red"] } },
    published_at: "2026-03-01T00:00:00Z",
  });
  await write("blue", {
    title: "Blue umbrella",
    body: "Umbrella for rain",
    facets: { merchant: { values: ["bean"] }, color: { values: ["blue"] } },
    published_at: "2026-04-01T00:00:00Z",
  });
  for (let n = 0; n < 12; n++)
    await write(`page${n}`, {
      title: `Paging item ${n}`,
      body: "pageword",
      published_at: `2025-0${(n % 9) + 1}-01T00:00:00Z`,
    });
});

describe("queries", () => {
  it("web-search syntax: words, quoted phrases, -exclusions and or", async () => {
    expect(ids(await query(t, `q=umbrella&${scope}`)).sort()).toEqual(["blue", "red"]);
    expect(ids(await query(t, `q=umbrella%20-red&${scope}`))).toEqual(["blue"]);
    expect(ids(await query(t, `q=${encodeURIComponent('"red umbrella"')}&${scope}`))).toEqual(["red"]);
    expect(ids(await query(t, `q=${encodeURIComponent("rain or trail")}&${scope}`)).sort()).toEqual([
      "blue",
      "running",
    ]);
  });

  it("ranks a title match above a body match", async () => {
    expect(ids(await query(t, `q=shoes&${scope}`))).toEqual(["running", "red"]);
  });

  it("lang chooses the stemming; accents fold", async () => {
    expect(ids(await query(t, `q=runs&lang=en&${scope}`))).toEqual(["running"]);
    expect(ids(await query(t, `q=runs&${scope}`))).toEqual([]);
    expect(ids(await query(t, `q=cafe%20creme&${scope}`))).toEqual(["cafe"]);
    expect(ids(await query(t, `q=strasse&lang=xx-unknown&${scope}`))).toEqual(["cafe"]);
  });

  it("empty q lists by recency; facet.<key> filters; facets= counts what matches", async () => {
    const listed = await query(t, `${scope}&facets=merchant,color&limit=4`);
    expect(ids(listed)).toEqual(["blue", "red", "cafe", "running"]);
    expect(listed.body.facets.merchant.values).toEqual([
      { value: "acme", count: "2" },
      { value: "bean", count: "2" },
    ]);
    const filtered = await query(t, `${scope}&facet.merchant=acme&facets=color`);
    expect(ids(filtered)).toEqual(["red", "running"]);
    expect(filtered.body.facets.color.values).toEqual([{ value: "red", count: "1" }]);
    expect(ids(await query(t, `${scope}&facet.merchant=acme&facet.color=blue`))).toEqual([]);
  });

  it("the cursor walks ranked and recent results without repeats or gaps", async () => {
    for (const q of ["q=pageword&", ""]) {
      const seen: string[] = [];
      let cursor = "";
      for (let pages = 0; pages < 10; pages++) {
        const answer = await query(t, `${q}${scope}&limit=5${cursor ? `&cursor=${cursor}` : ""}`);
        expect(answer.status).toBe(200);
        seen.push(...ids(answer));
        cursor = answer.body.next_cursor ?? "";
        if (cursor === "") break;
      }
      expect(new Set(seen).size, q).toBe(seen.length);
      expect(seen.filter((id) => id.startsWith("page")).length, q).toBe(12);
    }
  });

  const suggested = async (q: string, extra = "") => {
    const answer = await t.http("GET", `/search/api/v1/suggest?q=${encodeURIComponent(q)}&${scope}${extra}`);
    expect(answer.status).toBe(200);
    return answer.body as { suggestions: { title: string }[]; next_cursor?: string };
  };
  const titles = (answer: { suggestions: { title: string }[] }) => answer.suggestions.map((s) => s.title);

  it("suggests titles with a word starting with q: titles starting with it first, then newest", async () => {
    expect(titles(await suggested("umbr"))).toEqual(["Blue umbrella", "Red umbrella"]);
    expect(titles(await suggested("red"))).toEqual(["Red umbrella"]);
    expect(titles(await suggested("Umbrella"))).toEqual(["Blue umbrella", "Red umbrella"]);
    // Too short for trigrams: titles starting with it ("ca" starts "Café crème", nothing starts with "zz").
    expect(titles(await suggested("ca"))).toEqual(["Café crème voucher"]);
    expect(titles(await suggested("zz"))).toEqual([]);
    expect(titles(await suggested("crème"))).toEqual(["Café crème voucher"]);
  });

  it("suggests by trigram similarity only when no title has a word starting with q (a typo)", async () => {
    expect(titles(await suggested("umbrela"))).toEqual(expect.arrayContaining(["Blue umbrella", "Red umbrella"]));
    expect(titles(await suggested("zzqqxx"))).toEqual([]);
  });

  // Each would find "Red umbrella" or "Blue umbrella" as a pattern; as text, none is a word of a title or like one.
  it("takes q literally: regular-expression characters match themselves", async () => {
    for (const q of ["bl.e", "re[d]", "r[e]d", "b[l]ue", "bl?ue"]) expect(titles(await suggested(q)), q).toEqual([]);
  });

  it("pages suggestions without repeats or gaps", async () => {
    const seen: string[] = [];
    let cursor = "";
    for (let pages = 0; pages < 5; pages++) {
      const page = await suggested("paging", `&limit=5${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...titles(page));
      cursor = page.next_cursor ?? "";
      if (cursor === "") break;
    }
    expect(new Set(seen).size).toBe(12);
    expect(seen).toHaveLength(12);
  });

  it("counts facets= over every document suggested, not only the page (the spec's suggest takes facets)", async () => {
    const page = await t.http("GET", `/search/api/v1/suggest?q=umbr&${scope}&facets=color,merchant,none&limit=1`);
    expect(page.body.suggestions).toHaveLength(1);
    expect(page.body.facets).toEqual({
      color: {
        values: [
          { value: "blue", count: "1" },
          { value: "red", count: "1" },
        ],
        at_least: false,
      },
      merchant: {
        values: [
          { value: "acme", count: "1" },
          { value: "bean", count: "1" },
        ],
        at_least: false,
      },
      none: { values: [], at_least: false },
    });
    const filtered = await t.http("GET", `/search/api/v1/suggest?q=umbr&${scope}&facets=color&facet.merchant=acme`);
    expect(filtered.body.facets.color.values).toEqual([{ value: "red", count: "1" }]);
    const bad = await t.http("GET", `/search/api/v1/suggest?q=umbr&facets=Bad!`);
    expect(bad.body).toMatchObject({ status: 400, field: "facets" });
  });
});

describe("bad input", () => {
  it.each([
    ["lang=not_a_tag", "lang"],
    ["facets=Bad!", "facets"],
    ["facet.Bad%20Key=x", "facet.Bad Key"],
    ["limit=0", "limit"],
    ["limit=201", "limit"],
    ["limit=abc", "limit"],
    ["cursor=garbage", "cursor"],
    [`cursor=${Buffer.from('["t","x","a","b","c"]').toString("base64url")}`, "cursor"],
    [`q=${"a".repeat(10_240)}`, "q"],
    ["type=code", "type"],
    ["owner=Not%20A%20Slug", "owner"],
  ])("%s answers 400 naming %s", async (search, field) => {
    const answer = await query(t, search);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "request.invalid", field });
  });

  it.each([['"unbalanced'], ["-"], ["or"], ["!!(&|"], ["🦓🌂"], ["مظلة حمراء"], ["<->"], ["'"], ["\\"]])(
    "%j is searched literally",
    async (q) => {
      const answer = await query(t, `q=${encodeURIComponent(q)}&${scope}`);
      expect(answer.status).toBe(200);
      const suggested = await t.http("GET", `/search/api/v1/suggest?q=${encodeURIComponent(q)}`);
      expect(suggested.status).toBe(200);
    },
  );

  it("NUL in q is refused naming q, never a 5xx", async () => {
    const answer = await query(t, `q=${encodeURIComponent("a\u0000b")}`);
    expect(answer.body).toMatchObject({ status: 400, field: "q" });
  });

  it("no query string is ever a 5xx (fuzz)", async () => {
    const key = fc.constantFrom(
      "q",
      "lang",
      "facets",
      "limit",
      "cursor",
      "owner",
      "type",
      "facet.merchant",
      "facet.x",
      "facet.",
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(key, fc.string({ unit: "grapheme", maxLength: 40 })), { maxLength: 5 }),
        async (pairs) => {
          const search = pairs.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join("&");
          const answer = await query(t, search);
          expect(answer.status, search).toBeLessThan(500);
          if (answer.status !== 200) expect(answer.status, search).toBe(400);
        },
      ),
      { numRuns: 150 },
    );
  }, 60_000);
});
