import { beforeAll, describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";
import { backend, merchant, staff, unique } from "./support.js";

const t = usePlatform({ services: ["coupons"] });
let token: string;
beforeAll(async () => {
  token = await backend(t);
});

const API = "/coupons/api/v1";
const asStaff = (path: string, body: unknown) => t.http("POST", `${API}${path}`, { token, headers: staff, body });
const create = (body: Record<string, unknown>) => asStaff("/merchants", body);
const addRules = (id: string, domains: unknown[]) => asStaff(`/merchants/${id}/domains`, { domains });
const approve = (id: string) => asStaff(`/merchants/${id}/status`, { status: "MERCHANT_STATUS_APPROVED" });
const person = { "x-pf-subject": "usr_psl1" };
const submit = (host: string) =>
  t.http("POST", `${API}/coupons/submit`, { token, headers: person, body: { host, code: unique("C") } });
const resolve = (host: string) => t.http("GET", `${API}/merchants/resolve?host=${encodeURIComponent(host)}`, { token });

const refused = (field: string) => ({ status: 400, code: "coupons.domain.public_suffix", field });

/** Hosting platforms in the list's private section: each of their customers' sites is a site of its own. */
const HOSTING_SUFFIXES = [
  "vercel.app",
  "netlify.app",
  "pages.dev",
  "web.app",
  "appspot.com",
  "azurewebsites.net",
  "cloudfront.net",
];

describe("the whole public suffix list, private section included", () => {
  it.each(HOSTING_SUFFIXES)("%s is no merchant's: refused as a host, a rule and a submitted site", async (suffix) => {
    expect((await create({ host: suffix })).body).toMatchObject(refused("host"));
    const claim = [{ domain: suffix, include_subdomains: true }];
    const withRule = await create({ host: `${unique("shop")}.com`, domains: claim });
    expect(withRule.body).toMatchObject(refused("domains[0].domain"));
    const shop = await merchant(t, token);
    expect((await addRules(shop.id, claim)).body).toMatchObject(refused("domains[0].domain"));
    expect((await submit(suffix)).body).toMatchObject(refused("host"));
    expect((await resolve(suffix)).status).toBe(404);
  });

  it("a shop under one is a registrable domain: a site of its own, never shared with its neighbours", async () => {
    const first = `${unique("shop")}.vercel.app`;
    const submitted = await submit(`www.${first}`);
    expect(submitted.status).toBe(201);
    expect(submitted.body).toMatchObject({
      merchant_created: true,
      merchant: { host: first, domains: [{ domain: first, include_subdomains: true, path_prefix: "" }] },
    });
    expect((await approve(submitted.body.merchant.id)).status).toBe(200);
    expect((await resolve(`www.${first}`)).body).toMatchObject({
      registrable_domain: first,
      merchant: { id: submitted.body.merchant.id },
    });
    const neighbour = await submit(`${unique("other")}.vercel.app`);
    expect(neighbour.body).toMatchObject({ merchant_created: true });
    expect(neighbour.body.merchant.id).not.toBe(submitted.body.merchant.id);
  });

  it("the suffixes under amazonaws.com are refused; a merchant on amazonaws.com takes no shop under them", async () => {
    expect((await create({ host: "s3.amazonaws.com" })).body).toMatchObject(refused("host"));
    // amazonaws.com is Amazon's own registrable domain: the list names the suffixes below it, not it.
    const amazon = await create({ host: "amazonaws.com", status: "MERCHANT_STATUS_APPROVED" });
    expect(amazon.status).toBe(201);
    const shop = `${unique("shop")}.s3.amazonaws.com`;
    expect((await resolve(shop)).status).toBe(404);
    const submitted = await submit(shop);
    expect(submitted.body).toMatchObject({ merchant_created: true, merchant: { host: shop } });
  });
});
