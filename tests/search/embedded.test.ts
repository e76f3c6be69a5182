import { describe, expect, it } from "vitest";
import type { SearchContext } from "../../services/search/context.js";
import { usePlatform } from "../support/platform.js";
import { until } from "../support/until.js";
import { doc, ownerToken, put, query } from "./support.js";

// The embedded PostgreSQL (PGlite), as `npm start` runs without DATABASE_URL: pg_trgm and unaccent are loaded.
const t = usePlatform({ services: ["search"], env: { DATABASE_URL: "" } });

describe("search on the embedded database", () => {
  it("indexes, searches with stemming and folded accents, counts facets and suggests titles", async () => {
    const token = await ownerToken(t);
    await put(
      t,
      token,
      { id: "e1" },
      1,
      doc({
        title: "Crème brûlée coupon",
        body: "Desserts running cheap",
        lang: "en",
        facets: { merchant: { values: ["acme"] } },
      }),
    );
    const found = await query(t, "q=creme%20runs&lang=en&facets=merchant");
    expect(found.status).toBe(200);
    expect(found.body.results.map((r: { id: string }) => r.id)).toEqual(["e1"]);
    expect(found.body.facets.merchant.values).toEqual([{ value: "acme", count: "1" }]);
    const suggested = await t.http("GET", "/search/api/v1/suggest?q=creme");
    expect(suggested.body.suggestions.map((s: { id: string }) => s.id)).toEqual(["e1"]);
    // And from the in-memory index once built on PGlite (its watermark is PGlite's transaction ids).
    const engine = (t.platform.contexts.get("search") as SearchContext).engine;
    await until(() => (engine.documents() ?? 0) > 0);
    const again = await query(t, "q=creme%20runs&lang=en&facets=merchant");
    expect(again.body.results.map((r: { id: string }) => r.id)).toEqual(["e1"]);
    expect(again.body.facets).toEqual(found.body.facets);
  });
});
