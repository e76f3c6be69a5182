import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { backend, eventsAbout, merchant, staff, unique } from "./support.js";

const t = usePlatform({ services: ["coupons"] });
let token: string;
beforeAll(async () => {
  token = await backend(t);
});

const create = (body: Record<string, unknown>, headers: Record<string, string> = staff) =>
  t.http("POST", "/coupons/api/v1/merchants", { token, headers, body });
const resolve = (host: string) =>
  t.http("GET", `/coupons/api/v1/merchants/resolve?host=${encodeURIComponent(host)}`, { token });
const setStatus = (id: string, status: string, reason = "") =>
  t.http("POST", `/coupons/api/v1/merchants/${id}/status`, {
    token,
    headers: staff,
    body: { status: `MERCHANT_STATUS_${status}`, reason },
  });

describe("creating a merchant", () => {
  it("stores its host as a rule with subdomains, starts pending (201) and publishes coupons.merchant.created", async () => {
    const host = `${unique("Shop")}.Example.CO.UK.`;
    const answer = await create({ host, name: "Shop UK" });
    expect(answer.status).toBe(201);
    const normalized = host.toLowerCase().replace(/\.$/, "");
    expect(answer.body.merchant).toMatchObject({
      name: "Shop UK",
      host: normalized,
      status: "MERCHANT_STATUS_PENDING",
      domains: [{ domain: normalized, include_subdomains: true, path_prefix: "" }],
    });
    expect(answer.body.merchant.id).toMatch(/^mer_/);
    expect(await eventsAbout(t, answer.body.merchant.id)).toEqual(["coupons.merchant.created"]);
  });

  it("refuses a rule on a public suffix such as co.uk, and a host that is one (400 coupons.domain.public_suffix)", async () => {
    const rule = await create({
      host: `${unique("s")}.co.uk`,
      domains: [{ domain: "co.uk", include_subdomains: true }],
    });
    expect(rule.body).toMatchObject({ status: 400, code: "coupons.domain.public_suffix", field: "domains[0].domain" });
    const host = await create({ host: "com.au" });
    expect(host.body).toMatchObject({ status: 400, code: "coupons.domain.public_suffix", field: "host" });
  });

  it("refuses a bad or missing host, a repeated rule and a bad path (400 naming the field)", async () => {
    for (const [body, field] of [
      [{}, "host"],
      [{ host: "https://a.com/x" }, "host"],
      [{ host: "a.com", domains: [{ domain: "b.com" }, { domain: "B.com." }] }, "domains[1]"],
      [{ host: "a.com", domains: [{ domain: "b.com", path_prefix: "uk" }] }, "domains[0].path_prefix"],
      [{ host: "a.com", status: "MERCHANT_STATUS_DISABLED" }, "status"],
    ] as const) {
      const answer = await create(body);
      expect({ status: answer.status, field: answer.body.field }, JSON.stringify(body)).toEqual({ status: 400, field });
    }
  });

  it("reports every rule the contract declares that a request breaks, each naming its field", async () => {
    const answer = await create({
      host: "a.com",
      domains: [
        { domain: "b.com", path_prefix: "uk" },
        { domain: "c.com", path_prefix: `/${"p".repeat(200)}` },
        { domain: "d.com", path_prefix: "/deals?x=1" },
      ],
    });
    expect(answer.body).toMatchObject({ status: 400, code: "request.invalid", field: "domains[0].path_prefix" });
    expect(answer.body.errors.map((e: { field: string }) => e.field)).toEqual([
      "domains[0].path_prefix",
      "domains[1].path_prefix",
      "domains[2].path_prefix",
    ]);
  });

  it("refuses a rule another merchant holds (409 coupons.domain.taken)", async () => {
    const first = await merchant(t, token);
    const answer = await create({
      host: `${unique("other")}.com`,
      domains: [{ domain: first.host, include_subdomains: true }],
    });
    expect(answer.body).toMatchObject({
      status: 409,
      code: "coupons.domain.taken",
      merchant_id: first.id,
      domain: first.host,
    });
  });
});

describe("two merchants claiming one domain at once", () => {
  it("on creation: one wins (201), the other is 409 coupons.domain.taken naming the winner, never 500", async () => {
    const host = `${unique("race")}.com`;
    const answers = await Promise.all([create({ host, name: "A" }), create({ host, name: "B" })]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 409]);
    const won = answers.find((a) => a.status === 201)!;
    const lost = answers.find((a) => a.status === 409)!;
    expect(lost.body).toMatchObject({ code: "coupons.domain.taken", merchant_id: won.body.merchant.id, domain: host });
  });

  it("through the domains route: one wins, the other is 409 coupons.domain.taken, and the rule has one holder", async () => {
    const [a, b] = await Promise.all([merchant(t, token), merchant(t, token)]);
    const domain = `${unique("claimed")}.com`;
    const claim = (id: string) =>
      t.http("POST", `/coupons/api/v1/merchants/${id}/domains`, {
        token,
        headers: staff,
        body: { domains: [{ domain }] },
      });
    const answers = await Promise.all([claim(a.id), claim(b.id)]);
    expect(answers.map((x) => x.status).sort()).toEqual([200, 409]);
    const winner = answers[0].status === 200 ? a.id : b.id;
    expect(answers.find((x) => x.status === 409)!.body).toMatchObject({
      code: "coupons.domain.taken",
      merchant_id: winner,
      domain,
    });
    expect((await resolve(domain)).body.merchant.id).toBe(winner);
  });
});

describe("domain rules and resolve", () => {
  it("resolve maps a normalized host through subdomain rules to an approved merchant, with its eTLD+1", async () => {
    const shop = await merchant(t, token, { host: `${unique("r")}.co.uk` });
    const answer = await resolve(`WWW.Deals.${shop.host.toUpperCase()}.`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      host: `www.deals.${shop.host}`,
      registrable_domain: shop.host,
      merchant: { id: shop.id, status: "MERCHANT_STATUS_APPROVED" },
      rule: { domain: shop.host, include_subdomains: true, path_prefix: "" },
    });
  });

  it("an exact rule does not cover subdomains; the most specific rule wins; path rules never match host-only lookups", async () => {
    const base = `${unique("p")}.com`;
    const whole = await merchant(t, token, { host: base });
    const only = await merchant(t, token, {
      host: `eu.${base}`,
      domains: [{ domain: `eu.${base}`, include_subdomains: false }],
    });
    const pathOnly = await merchant(t, token, { host: `${unique("q")}.com` });
    const added = await t.http("POST", `/coupons/api/v1/merchants/${pathOnly.id}/domains`, {
      token,
      headers: staff,
      body: { domains: [{ domain: `us.${base}`, path_prefix: "/deals/" }] },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    expect(added.body.merchant.domains).toContainEqual({
      domain: `us.${base}`,
      include_subdomains: false,
      path_prefix: "/deals",
    });
    expect((await resolve(`eu.${base}`)).body.merchant.id).toBe(only.id);
    expect((await resolve(`x.eu.${base}`)).body.merchant.id).toBe(whole.id);
    // The path rule on us.<base> never matches the host alone: the whole-site rule does.
    expect((await resolve(`us.${base}`)).body.merchant.id).toBe(whole.id);
  });

  it("resolves IDNs given in Unicode or punycode alike", async () => {
    const shop = await merchant(t, token, { host: `bücher-${unique("i")}.de` });
    expect(shop.host).toMatch(/^xn--/);
    expect((await resolve(shop.host)).body.merchant.id).toBe(shop.id);
    expect((await resolve(`www.${shop.host.replace(/^xn--.*?-/, "")}`)).status).toBe(404);
  });

  it("answers 404 for pending and disabled merchants, unknown sites and public suffixes; 400 for what is not a hostname", async () => {
    const pending = await merchant(t, token, { status: "MERCHANT_STATUS_PENDING" });
    expect((await resolve(pending.host)).body).toMatchObject({ status: 404, code: "coupons.merchant.not_found" });
    expect((await resolve(`${unique("none")}.com`)).status).toBe(404);
    expect((await resolve("co.uk")).status).toBe(404);
    expect((await resolve("1.2.3.4")).body).toMatchObject({ status: 400, field: "host" });
    expect((await resolve("")).body).toMatchObject({ status: 400, field: "host" });
  });

  it("removes rules, and refuses removing one the merchant does not have (404 coupons.domain.not_found)", async () => {
    const shop = await merchant(t, token);
    const path = `/coupons/api/v1/merchants/${shop.id}/domains`;
    const removed = await t.http("POST", path, {
      token,
      headers: staff,
      body: { remove_domains: [{ domain: shop.host }] },
    });
    expect(removed.status).toBe(200);
    expect(removed.body.merchant.domains).toEqual([]);
    expect((await resolve(shop.host)).status).toBe(404);
    const again = await t.http("POST", path, {
      token,
      headers: staff,
      body: { remove_domains: [{ domain: shop.host }] },
    });
    expect(again.body).toMatchObject({ status: 404, code: "coupons.domain.not_found", field: "remove_domains[0]" });
    expect((await t.http("POST", path, { token, headers: staff, body: {} })).body).toMatchObject({
      status: 400,
      field: "domains",
    });
    expect(
      (
        await t.http("POST", "/coupons/api/v1/merchants/mer_none/domains", {
          token,
          headers: staff,
          body: { domains: [{ domain: "z.com" }] },
        })
      ).status,
    ).toBe(404);
    expect(await eventsAbout(t, shop.id)).toEqual(["coupons.merchant.created", "coupons.merchant.domains_changed"]);
  });
});

describe("merchant status", () => {
  it("pending → approved → disabled → approved, each publishing coupons.merchant.status_changed; repeats answer as is", async () => {
    const shop = await merchant(t, token, { status: "MERCHANT_STATUS_PENDING" });
    const read = () => t.http("GET", `/coupons/api/v1/merchants/${shop.id}`);
    expect((await read()).body).toMatchObject({ status: 404, code: "coupons.merchant.not_found" });
    expect((await setStatus(shop.id, "APPROVED", "checked")).body.merchant.status).toBe("MERCHANT_STATUS_APPROVED");
    expect((await read()).body.merchant).toMatchObject({
      id: shop.id,
      status: "MERCHANT_STATUS_APPROVED",
      domains: [{ domain: shop.host }],
    });
    expect((await setStatus(shop.id, "APPROVED")).status).toBe(200);
    expect((await setStatus(shop.id, "DISABLED", "fraud")).body.merchant.status).toBe("MERCHANT_STATUS_DISABLED");
    expect((await read()).status).toBe(404);
    expect((await setStatus(shop.id, "APPROVED")).status).toBe(200);
    expect(await eventsAbout(t, shop.id)).toEqual([
      "coupons.merchant.created",
      "coupons.merchant.status_changed",
      "coupons.merchant.status_changed",
      "coupons.merchant.status_changed",
    ]);
  });

  it("refuses going back to pending (400) and unknown merchants (404)", async () => {
    const shop = await merchant(t, token);
    expect((await setStatus(shop.id, "PENDING")).body).toMatchObject({ status: 400, field: "status" });
    expect((await setStatus("mer_none", "APPROVED")).body).toMatchObject({
      status: 404,
      code: "coupons.merchant.not_found",
    });
  });
});
