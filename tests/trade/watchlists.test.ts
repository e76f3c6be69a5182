import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { ALL_TRADE, instrument, person, TRADE_ENV, tradeCaller } from "./support.js";

const t = usePlatform({
  services: ["trade"],
  env: { ...TRADE_ENV, PF_TRADE_WATCHLISTS_PER_PERSON: "3", PF_TRADE_ITEMS_PER_WATCHLIST: "2" },
});
let web: string;
let as: ReturnType<typeof tradeCaller>;

beforeAll(async () => {
  web = await t.token({ kind: "service", svc: "web", caps: ALL_TRADE });
  as = tradeCaller(t, () => web);
});

const create = async (owner: string, name = "Tech") => {
  const answer = await as("POST", "/watchlists", owner, { name });
  expect(answer.status).toBe(201);
  return answer.body.watchlist;
};

describe("watchlists", () => {
  it("create (201), read, rename, list newest first, delete", async () => {
    const owner = person("w");
    const made = await create(owner, "  Tech  ");
    expect(made).toMatchObject({ owner, name: "Tech", items: [] });
    expect(made.id).toMatch(/^wlt_/);
    expect((await as("GET", `/watchlists/${made.id}`, owner)).body.watchlist).toEqual(made);
    const renamed = await as("PATCH", `/watchlists/${made.id}`, owner, { name: "Chips" });
    expect(renamed.body.watchlist).toMatchObject({ id: made.id, name: "Chips" });
    const second = await create(owner, "Energy");
    const listed = await as("GET", "/watchlists?limit=1", owner);
    expect(listed.body.watchlists.watchlists.map((w: { id: string }) => w.id)).toEqual([second.id]);
    const next = await as("GET", `/watchlists?limit=1&cursor=${listed.body.watchlists.next_cursor}`, owner);
    expect(next.body.watchlists).toMatchObject({ watchlists: [{ id: made.id }], next_cursor: "" });
    expect((await as("DELETE", `/watchlists/${made.id}`, owner)).body).toEqual({ id: made.id, deleted: true });
    expect((await as("GET", `/watchlists/${made.id}`, owner)).body).toMatchObject({
      status: 404,
      code: "watchlist.not_found",
    });
  });

  it("items: PUT adds once (idempotent), DELETE removes, again changes nothing", async () => {
    const owner = person("i");
    const list = await create(owner);
    const a = await instrument(t, web, { name: "Alpha" });
    const added = await as("PUT", `/watchlists/${list.id}/items/${a.symbol.toLowerCase()}`, owner, {});
    expect(added.status).toBe(200);
    expect(added.body.watchlist.items).toMatchObject([{ instrument_id: a.id, symbol: a.symbol, name: "Alpha" }]);
    const again = await as("PUT", `/watchlists/${list.id}/items/${a.symbol}`, owner, {});
    expect(again.body.watchlist.items).toEqual(added.body.watchlist.items);
    const removed = await as("DELETE", `/watchlists/${list.id}/items/${a.symbol}`, owner);
    expect(removed.status).toBe(200);
    expect(removed.body.watchlist.items).toEqual([]);
    const twice = await as("DELETE", `/watchlists/${list.id}/items/${a.symbol}`, owner);
    expect(twice.status).toBe(200);
    expect((await as("PUT", `/watchlists/${list.id}/items/NOSUCHZ9`, owner, {})).body).toMatchObject({
      status: 404,
      code: "instrument.not_found",
    });
    expect((await as("PUT", `/watchlists/${list.id}/items/${"X".repeat(30)}`, owner, {})).body).toMatchObject({
      status: 400,
      field: "symbol",
    });
  });

  it("another person's watchlist answers 404 on every route", async () => {
    const owner = person("o");
    const list = await create(owner);
    const a = await instrument(t, web);
    await as("PUT", `/watchlists/${list.id}/items/${a.symbol}`, owner, {});
    const stranger = person("s");
    const tries: [string, string, unknown?][] = [
      ["GET", `/watchlists/${list.id}`],
      ["PATCH", `/watchlists/${list.id}`, { name: "Mine" }],
      ["DELETE", `/watchlists/${list.id}`],
      ["PUT", `/watchlists/${list.id}/items/${a.symbol}`, {}],
      ["DELETE", `/watchlists/${list.id}/items/${a.symbol}`],
    ];
    for (const [method, path, body] of tries) {
      expect((await as(method, path, stranger, body)).body, `${method} ${path}`).toMatchObject({
        status: 404,
        code: "watchlist.not_found",
      });
    }
    // The stranger's own token too.
    const own = await t.token({ kind: "user", sub: stranger });
    const direct = await t.http("GET", `/trade/api/v1/watchlists/${list.id}`, { token: own });
    expect(direct.body).toMatchObject({ status: 404, code: "watchlist.not_found" });
    expect((await as("GET", "/watchlists", stranger)).body.watchlists.watchlists).toEqual([]);
    // Nothing changed.
    const kept = (await as("GET", `/watchlists/${list.id}`, owner)).body.watchlist;
    expect(kept).toMatchObject({ name: "Tech", items: [{ instrument_id: a.id }] });
  });

  it("caps: watchlists per person and items per watchlist (409 with a limit)", async () => {
    const owner = person("c");
    const lists = await Promise.all([1, 2, 3].map((i) => create(owner, `L${i}`)));
    expect((await as("POST", "/watchlists", owner, { name: "L4" })).body).toMatchObject({
      status: 409,
      code: "watchlist.limit",
      limit: 3,
    });
    const [a, b, c] = [await instrument(t, web), await instrument(t, web), await instrument(t, web)];
    for (const x of [a, b]) await as("PUT", `/watchlists/${lists[0].id}/items/${x.symbol}`, owner, {});
    expect((await as("PUT", `/watchlists/${lists[0].id}/items/${a.symbol}`, owner, {})).status).toBe(200);
    expect((await as("PUT", `/watchlists/${lists[0].id}/items/${c.symbol}`, owner, {})).body).toMatchObject({
      status: 409,
      code: "watchlist.items_limit",
      limit: 2,
    });
  });

  it("refuses malformed input naming the field", async () => {
    const owner = person("m");
    expect((await as("POST", "/watchlists", owner, { name: " " })).body).toMatchObject({ status: 400, field: "name" });
    expect((await as("POST", "/watchlists", owner, { name: "x".repeat(101) })).body).toMatchObject({
      status: 400,
      field: "name",
    });
    expect((await as("POST", "/watchlists", owner, { name: "A", symbol: "AAPL" })).body).toMatchObject({
      status: 400,
      code: "request.invalid",
    });
    expect((await as("GET", "/watchlists/wlt_NOT-VALID", owner)).body).toMatchObject({ status: 400, field: "id" });
  });
});
