import { beforeAll, describe, expect, it } from "vitest";
import { protoComments } from "../../gen/pf/docs.js";
import { usePlatform } from "../support/platform.js";
import { actingFor, ALL_DEALS, person, submit } from "./support.js";

const t = usePlatform({ services: ["deals"] });
let web: string;
let as: ReturnType<typeof actingFor>;
const resolve = (body: Record<string, unknown>) =>
  t.http("POST", "/deals/api/v1/products/resolve", { token: web, body });

beforeAll(async () => {
  web = await t.token({ kind: "service", svc: "web", caps: ALL_DEALS });
  as = actingFor(t, () => web);
});

describe("product resolve", () => {
  it("creates a product when none matches, resolves it again by any alias, unless create is false", async () => {
    const none = await resolve({ gtin: "0000040063813", create: false });
    expect(none.body).toMatchObject({ status: 404, code: "product.not_found" });
    const made = await resolve({ gtin: "4006381333931", mpn: "ab-12 3", name: "Stabilo  Pen" });
    expect(made.status).toBe(200);
    expect(made.body.created).toBe(true);
    const id = made.body.product.id;
    expect(made.body.product.aliases).toEqual(
      expect.arrayContaining([
        { kind: "gtin", value: "04006381333931", product_id: id },
        { kind: "mpn", value: "AB123", product_id: id },
      ]),
    );
    const byName = await resolve({ name: " Stabilo Pen ", create: false });
    expect(byName.body).toMatchObject({ created: false, product: { id } });
    // An exact name: another case is another name.
    const otherCase = await resolve({ name: "stabilo pen", create: false });
    expect(otherCase.body).toMatchObject({ status: 404, code: "product.not_found" });
    const more = await resolve({ mpn: "AB123", url: "https://www.pens.example/stabilo/" });
    expect(more.body.product.aliases.map((a: { kind: string }) => a.kind)).toContain("url");
  });

  it("reports aliases naming another product as conflicts and never re-points them", async () => {
    const a = (await resolve({ sku: "SKU-A1" })).body.product.id;
    const b = (await resolve({ sku: "SKU-B1" })).body.product.id;
    const answer = await resolve({ gtin: "96385074", sku: "SKU-B1", mpn: "NEW-MPN" });
    expect(answer.body.product.id).toBe(b);
    const mixed = await resolve({ sku: "SKU-A1", mpn: "NEW-MPN" });
    // mpn is stronger than sku: the product is b's, and sku SKU-A1 stays a's.
    expect(mixed.body.product.id).toBe(b);
    expect(mixed.body.conflicts).toEqual([{ kind: "sku", value: "SKUA1", product_id: a }]);
    expect((await resolve({ sku: "SKU-A1" })).body.product.id).toBe(a);
  });

  it("create false with no match: 404 product.not_found, as the contract documents (an answer always carries product)", async () => {
    const none = await resolve({ sku: `NONE-${Date.now()}`, create: false });
    expect(none.body).toMatchObject({ status: 404, code: "product.not_found" });
    expect(protoComments["pf.deals.v1.ProductResolveResult.product"]).toContain("product.not_found");
    expect(protoComments["pf.deals.v1.ProductResolveResult.product"]).not.toContain("absent");
    expect(protoComments["pf.deals.v1.ProductResolveRequest.create"]).toContain("404 product.not_found");
  });

  it("concurrent resolves of the same new aliases create one product, created once", async () => {
    for (let round = 0; round < 3; round++) {
      const tag = `${Date.now().toString(36)}${round}`;
      const answers = await Promise.all([
        resolve({ sku: `RACE-${tag}`, mpn: `M-${tag}` }),
        resolve({ mpn: `M-${tag}`, sku: `RACE-${tag}` }),
        resolve({ sku: `RACE-${tag}` }),
      ]);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
      expect(new Set(answers.map((answer) => answer.body.product.id)).size).toBe(1);
      expect(answers.filter((answer) => answer.body.created === true)).toHaveLength(1);
      expect(answers.flatMap((answer) => answer.body.conflicts ?? [])).toEqual([]);
    }
  });

  it("refuses bad aliases by field and an empty request", async () => {
    expect((await resolve({ gtin: "12ab" })).body).toMatchObject({ status: 400, field: "gtin" });
    expect((await resolve({})).body).toMatchObject({ status: 400, code: "request.invalid" });
  });
});

describe("watches", () => {
  it("create, list and delete one's own; another person's answers 404; bad kinds refused by field", async () => {
    const [owner, other] = [person(), person()];
    const product = (await resolve({ sku: `W-${owner}` })).body.product.id;
    const keyword = await as("POST", "/watches", owner, { kind: "WATCH_KIND_KEYWORD", keyword: "lego castle" });
    expect(keyword.status).toBe(201);
    expect(keyword.body.watch).toMatchObject({ owner, kind: "WATCH_KIND_KEYWORD", notified_count: "0" });
    const saved = await as("POST", "/watches", owner, { kind: "WATCH_KIND_SAVED_SEARCH", query: "lego" });
    const below = await as("POST", "/watches", owner, {
      kind: "WATCH_KIND_PRICE_BELOW",
      product_id: product,
      price_below: { minor_units: 1000, currency: "EUR" },
    });
    expect(below.status).toBe(201);
    for (const [body, field] of [
      [{ kind: "WATCH_KIND_KEYWORD" }, "keyword"],
      [{ kind: "WATCH_KIND_PRODUCT", product_id: "prd_none" }, "product_id"],
      [{ kind: "WATCH_KIND_KEYWORD", keyword: "x", query: "y" }, "query"],
      [{ kind: "WATCH_KIND_PRICE_BELOW", keyword: "x" }, "price_below.currency"],
      [{}, "kind"],
    ] as const) {
      const answer = await as("POST", "/watches", owner, body);
      expect(answer.body, field).toMatchObject({ status: 400, field });
    }
    const list = await as("GET", "/watches?limit=2", owner);
    expect(list.body.watches.watches.map((w: { id: string }) => w.id)).toEqual([
      below.body.watch.id,
      saved.body.watch.id,
    ]);
    const next = await as("GET", `/watches?cursor=${list.body.watches.next_cursor}`, owner);
    expect(next.body.watches.watches.map((w: { id: string }) => w.id)).toEqual([keyword.body.watch.id]);
    // A forged cursor (well-formed, but not the shape this list issues) is refused, never read as "from the start".
    for (const forged of [[1], ["wch_1", "x"], [""]]) {
      const refused = await as(
        "GET",
        `/watches?cursor=${Buffer.from(JSON.stringify(forged)).toString("base64url")}`,
        owner,
      );
      expect(refused.body, JSON.stringify(forged)).toMatchObject({
        status: 400,
        code: "request.invalid",
        field: "cursor",
      });
    }
    expect((await as("GET", "/watches", other)).body.watches.watches).toEqual([]);
    expect((await as("DELETE", `/watches/${keyword.body.watch.id}`, other)).body).toMatchObject({
      status: 404,
      code: "watch.not_found",
    });
    expect((await as("DELETE", `/watches/${keyword.body.watch.id}`, owner)).body.watch.id).toBe(keyword.body.watch.id);
    expect((await as("DELETE", `/watches/${keyword.body.watch.id}`, owner)).status).toBe(404);
  });

  it('pages hold 1–200 watches: limit=0 is 400 naming limit (never "unset"), as is 201', async () => {
    const owner = person();
    await as("POST", "/watches", owner, { kind: "WATCH_KIND_KEYWORD", keyword: "lego" });
    for (const limit of ["0", "201", "-1"]) {
      const refused = await as("GET", `/watches?limit=${limit}`, owner);
      expect(refused.body, limit).toMatchObject({ status: 400, code: "request.invalid", field: "limit" });
    }
    expect((await as("GET", "/watches?limit=1", owner)).body.watches.watches).toHaveLength(1);
    expect((await as("GET", "/watches", owner)).status).toBe(200);
  });

  it("count notifications: keyword and price-below watches notify once per observation; saved searches never", async () => {
    const owner = person();
    const product = (await resolve({ sku: `N-${owner}` })).body.product.id;
    const word = `zq${Date.now().toString(36)}`;
    const keyword = (await as("POST", "/watches", owner, { kind: "WATCH_KIND_KEYWORD", keyword: word })).body.watch;
    const saved = (await as("POST", "/watches", owner, { kind: "WATCH_KIND_SAVED_SEARCH", query: word })).body.watch;
    const below = (
      await as("POST", "/watches", owner, {
        kind: "WATCH_KIND_PRICE_BELOW",
        product_id: product,
        price_below: { minor_units: 1000, currency: "EUR" },
      })
    ).body.watch;
    const offer = (
      await submit(t, web, person(), {
        title: `Great ${word} deal`,
        product_id: product,
        observation: { price: { minor_units: 1500, currency: "EUR" } },
      })
    ).offer;
    await as("POST", `/offers/${offer.id}/observations`, person(), {
      observation: { price: { minor_units: 999, currency: "EUR" } },
    });
    await as("POST", `/offers/${offer.id}/observations`, person(), {
      observation: { price: { minor_units: 999, currency: "USD" } },
    });
    const counts = Object.fromEntries(
      (await as("GET", "/watches", owner)).body.watches.watches.map((w: { id: string; notified_count: string }) => [
        w.id,
        w.notified_count,
      ]),
    );
    expect(counts).toEqual({ [keyword.id]: "3", [saved.id]: "0", [below.id]: "1" });
  });
});
