import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SearchService } from "../../gen/pf/search/v1/search_pb.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { untilPushFailed } from "../support/search-relay.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { until } from "../support/until.js";
import { backend, merchant, staff, submitted, unique } from "../coupons/support.js";
import { ALL_DEALS, person, submit } from "../deals/support.js";

// Owners (coupons, deals, tips) in one platform reach search, in another, over gRPC through a proxy the test cuts and
// restores: search stopped and back, as the owners see it.
let search: TestPlatform;
let owners: TestPlatform;
let proxy: TcpProxy;

beforeAll(async () => {
  const key = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const shared = { NATS_URL: "", PF_JWT_PRIVATE_KEY: key };
  search = await startTestPlatform({ services: ["search"], env: shared });
  const rpc = new URL(search.platform.rpcUrl);
  proxy = new TcpProxy(rpc.hostname, Number(rpc.port));
  await proxy.open();
  owners = await startTestPlatform({
    services: ["coupons", "deals", "tips"],
    env: {
      ...shared,
      PF_SEARCH_URL: `http://127.0.0.1:${proxy.port}`,
      PF_CALL_TIMEOUT_MS: "2000",
      PF_SEARCH_RELAY_POLL_MS: "50",
      PF_SEARCH_RELAY_MAX_BACKOFF_MS: "1000",
    },
  });
});
afterAll(async () => {
  await owners?.stop();
  await proxy?.cut();
  await search?.stop();
});

/** What anyone finds in search (the public query route), by owner, type and words. */
async function found(owner: string, type: string, q: string): Promise<{ id: string; title: string }[]> {
  const answer = await search.http(
    "GET",
    `/search/api/v1/search?owner=${owner}&type=${type}&q=${encodeURIComponent(q)}`,
  );
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body.results;
}

/** What search holds of an owner's documents (its inventory), by id. */
async function held(owner: string) {
  const token = await search.token({ kind: "service", svc: owner, caps: ["search.document.write"] });
  const all = new Map<string, { revision: bigint; deleted: boolean }>();
  let cursor = "";
  do {
    const page = await search.client(SearchService, token).listOwnerDocuments({ owner, limit: 200, cursor });
    for (const document of page.documents) all.set(`${document.type}/${document.id}`, document);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

describe("owners' documents in search", () => {
  it("a published code, a disabled merchant and a merged deal show up in and drop out of search, across search going away and back", async () => {
    const coupons = await backend(owners);
    const web = await owners.token({ kind: "service", svc: "web", caps: ALL_DEALS });
    const shop = await merchant(owners, coupons, { name: "Bookshop" });
    const code = unique("READ");
    const published = (await submitted(owners, coupons, shop.id, { code, description: "ten percent off novels" }))
      .coupon as { id: string };
    const canonical = (await submit(owners, web, person(), { title: "Espresso grinder deal" })).offer;
    const duplicate = (await submit(owners, web, person(), { title: "Espresso grinder bargain" })).offer;

    await until(async () => (await found("coupons", "coupon", code)).some((hit) => hit.id === published.id));
    await until(async () => (await found("deals", "offer", "espresso grinder")).length === 2);
    expect((await found("coupons", "coupon", "novels")).map((hit) => hit.title)).toContain(`${code} — Bookshop`);

    // Search goes away: the owners' writes go on, and nothing they wrote is lost.
    await proxy.cut();
    const disabled = await owners.http("POST", `/coupons/api/v1/merchants/${shop.id}/status`, {
      token: coupons,
      headers: staff,
      body: { status: "MERCHANT_STATUS_DISABLED", reason: "closed" },
    });
    expect(disabled.status, JSON.stringify(disabled.body)).toBe(200);
    const merged = await owners.http("POST", `/deals/api/v1/offers/${duplicate.id}/merge`, {
      token: web,
      body: { into: canonical.id, reason: "same deal" },
    });
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
    const later = await merchant(owners, coupons, { name: "Tea house" });
    const laterCode = unique("TEA");
    const whileDown = (await submitted(owners, coupons, later.id, { code: laterCode })).coupon as { id: string };
    // The relay tries and fails meanwhile; search still shows what it had.
    await untilPushFailed(owners.platform.databaseUrl, "coupons", [whileDown.id]);
    expect((await found("coupons", "coupon", code)).map((hit) => hit.id)).toContain(published.id);
    expect(await found("coupons", "coupon", laterCode)).toEqual([]);

    // Search is back: the disabled merchant's code and the merged deal drop out, the code written meanwhile arrives.
    await proxy.open();
    await until(async () => (await found("coupons", "coupon", laterCode)).some((hit) => hit.id === whileDown.id));
    await until(async () => (await found("coupons", "coupon", code)).length === 0);
    await until(async () => (await found("deals", "offer", "espresso grinder")).length === 1);
    expect((await found("deals", "offer", "espresso grinder"))[0].id).toBe(canonical.id);

    // Search keeps their tombstones, at the revision after the one it showed.
    const coupons_ = await held("coupons");
    expect(coupons_.get(`coupon/${published.id}`)).toMatchObject({ revision: 2n, deleted: true });
    expect(coupons_.get(`coupon/${whileDown.id}`)).toMatchObject({ revision: 1n, deleted: false });
    const deals = await held("deals");
    expect(deals.get(`offer/${duplicate.id}`)).toMatchObject({ revision: 2n, deleted: true });
    expect(deals.get(`offer/${canonical.id}`)).toMatchObject({ revision: 1n, deleted: false });
  });

  it("a creator's public tip page is in search while the page is enabled, and leaves it when disabled", async () => {
    const creator = person();
    const token = await owners.token({ kind: "user", sub: creator });
    const page = (page_enabled: boolean) =>
      owners.http("PATCH", `/tips/api/v1/profiles/${creator}`, { token, body: { page_enabled, accepting: true } });
    expect((await page(true)).status).toBe(200);
    await until(async () => (await held("tips")).get(`tip_page/${creator}`)?.deleted === false);
    expect((await page(false)).status).toBe(200);
    await until(async () => (await held("tips")).get(`tip_page/${creator}`)?.deleted === true);
  });
});
