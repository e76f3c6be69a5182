import { describe, expect, it } from "vitest";
import { confidenceOf, couponStatus, utcDay, type DayCount } from "../../services/coupons/domain/confidence.js";
import { hostChain, normalizeHost } from "../../services/coupons/domain/hosts.js";
import { isPublicSuffix, registrableDomain } from "../../services/kit/handler/public-suffix.js";
import { bestRule, covers, normalizeRule } from "../../services/coupons/domain/rules.js";
import { merchantTransition } from "../../services/coupons/domain/transitions.js";

describe("host normalization", () => {
  it.each([
    ["Example.COM", "example.com"],
    ["shop.example.com.", "shop.example.com"],
    ["  www.Example.co.UK ", "www.example.co.uk"],
    ["Bücher.de", "xn--bcher-kva.de"],
    ["xn--bcher-kva.de", "xn--bcher-kva.de"],
  ])("%s → %s (lower case, punycode, no trailing dot; www. kept)", (raw, host) => {
    expect(normalizeHost(raw)).toBe(host);
  });

  it.each([
    "",
    "exa mple.com",
    "example.com:8080",
    "https://example.com",
    "1.2.3.4",
    "[::1]",
    "ex..com",
    "-a.com",
    "a_b.com",
    `${"a".repeat(64)}.com`,
  ])("refuses %j", (raw) => expect(normalizeHost(raw)).toBeUndefined());
});

describe("the domains a rule covering a host can name (its chain, over the whole public suffix list)", () => {
  it.each([
    ["a.b.example.co.uk", ["a.b.example.co.uk", "b.example.co.uk", "example.co.uk"]],
    ["example.com", ["example.com"]],
    ["a.store.myshopify.com", ["a.store.myshopify.com", "store.myshopify.com"]],
    // A shop on a hosting platform's suffix is a site of its own: the chain stops at it.
    ["www.myshop.vercel.app", ["www.myshop.vercel.app", "myshop.vercel.app"]],
    ["shop.s3.amazonaws.com", ["shop.s3.amazonaws.com"]],
  ])("%s → %j", (host, chain) => {
    expect(hostChain(host)).toEqual(chain);
  });

  const SUFFIXES = ["com", "co.uk", "com.au", "myshopify.com", "vercel.app", "foo.ck", "zz"];

  it.each(SUFFIXES)("%s is a public suffix: no rule covers it", (host) => {
    expect(isPublicSuffix(host)).toBe(true);
    expect(hostChain(host)).toEqual([]);
  });

  const SECOND_LEVELS = [
    "co.il",
    "com.sg",
    "com.tr",
    "co.id",
    "com.ar",
    "com.br",
    "com.mx",
    "co.nz",
    "co.za",
    "com.cn",
    "co.kr",
    "com.tw",
    "co.in",
    "com.hk",
    "com.my",
    "co.th",
    "com.vn",
    "com.co",
    "com.pl",
  ];

  it.each(SECOND_LEVELS)(
    "the common second level %s is a suffix: shops under it are registrable on their own",
    (suffix) => {
      expect(isPublicSuffix(suffix)).toBe(true);
      expect(registrableDomain(`shop.${suffix}`)).toBe(`shop.${suffix}`);
      expect(registrableDomain(`www.shop.${suffix}`)).toBe(`shop.${suffix}`);
      expect(hostChain(`a.shop.${suffix}`)).toEqual([`a.shop.${suffix}`, `shop.${suffix}`]);
    },
  );
});

describe("domain rules", () => {
  it("are never on a public suffix (a rule on co.uk is refused)", () => {
    for (const domain of ["co.uk", "com", "CO.UK.", "myshopify.com", "Vercel.App", "pages.dev"]) {
      expect(() => normalizeRule("domains[0]", { domain, includeSubdomains: true, pathPrefix: "" })).toThrow(
        /public suffix/,
      );
    }
    expect(
      normalizeRule("domains[0]", { domain: "Example.CO.UK", includeSubdomains: true, pathPrefix: "/uk/" }),
    ).toEqual({
      domain: "example.co.uk",
      includeSubdomains: true,
      pathPrefix: "/uk",
    });
  });

  // A path's shape (a path of at most 200 characters, no query or fragment) is the contract's rule, refused before
  // any handler runs: tests/coupons/merchants.test.ts.
  it("store a path prefix without its trailing slashes, the root as none", () => {
    const pathOf = (pathPrefix: string) =>
      normalizeRule("d", { domain: "a.com", includeSubdomains: false, pathPrefix }).pathPrefix;
    expect(pathOf("/")).toBe("");
    expect(pathOf("")).toBe("");
    expect(pathOf("/uk//")).toBe("/uk");
    expect(pathOf("/uk/deals")).toBe("/uk/deals");
  });

  const rules = [
    { domain: "example.com", includeSubdomains: true, pathPrefix: "", id: "all" },
    { domain: "example.com", includeSubdomains: true, pathPrefix: "/uk", id: "uk" },
    { domain: "shop.example.com", includeSubdomains: false, pathPrefix: "", id: "shop" },
  ];

  it("match subdomains only when the rule includes them, and the most specific wins", () => {
    expect(bestRule(rules, "example.com", undefined)?.id).toBe("all");
    expect(bestRule(rules, "www.example.com", undefined)?.id).toBe("all");
    expect(bestRule(rules, "shop.example.com", undefined)?.id).toBe("shop");
    expect(bestRule(rules, "a.shop.example.com", undefined)?.id).toBe("all");
    expect(bestRule(rules, "notexample.com", undefined)).toBeUndefined();
  });

  it("with a path never match a host-only lookup, and match pages under the path on segment boundaries", () => {
    const uk = rules[1];
    expect(covers(uk, "example.com", undefined)).toBe(false);
    expect(covers(uk, "example.com", "/uk")).toBe(true);
    expect(covers(uk, "example.com", "/uk/deals")).toBe(true);
    expect(covers(uk, "example.com", "/ukraine")).toBe(false);
    expect(bestRule(rules, "www.example.com", "/uk/deals")?.id).toBe("uk");
    expect(bestRule(rules, "www.example.com", "/us")?.id).toBe("all");
  });
});

describe("status and confidence follow from reports and time", () => {
  const now = new Date("2026-03-15T12:00:00Z");
  const code = { moderation: "" as const, expiresAt: null };
  const reports = (...counts: [string, "worked" | "failed", number][]): DayCount[] =>
    counts.map(([day, outcome, count]) => ({ day, outcome, count }));

  it("no reports: unknown at 0.5", () => {
    expect(couponStatus(code, [], now)).toEqual({ status: "unknown", confidence: 0.5 });
  });

  it("a fresh worked report: reported_working; a fresh failed one: reported_failed", () => {
    expect(couponStatus(code, reports(["2026-03-15", "worked", 1]), now)).toEqual({
      status: "reported_working",
      confidence: 0.667,
    });
    expect(couponStatus(code, reports(["2026-03-15", "failed", 1]), now)).toEqual({
      status: "reported_failed",
      confidence: 0.333,
    });
  });

  it("mixed reports between the thresholds stay unknown", () => {
    expect(couponStatus(code, reports(["2026-03-15", "worked", 2], ["2026-03-15", "failed", 2]), now)).toEqual({
      status: "unknown",
      confidence: 0.5,
    });
  });

  it("reports weigh half as much every 14 days, and one report alone stops counting after that", () => {
    expect(confidenceOf(reports(["2026-03-01", "worked", 1]), now)).toEqual({ confidence: 0.6, weight: 0.5 });
    expect(couponStatus(code, reports(["2026-03-01", "worked", 1]), now).status).toBe("reported_working");
    expect(couponStatus(code, reports(["2026-02-28", "worked", 1]), now).status).toBe("unknown");
    // A recent failure outweighs older successes.
    expect(couponStatus(code, reports(["2026-01-15", "worked", 3], ["2026-03-14", "failed", 2]), now).status).toBe(
      "reported_failed",
    );
  });

  it("moderation comes first, then the expiry", () => {
    const working = reports(["2026-03-15", "worked", 5]);
    expect(couponStatus({ moderation: "disabled", expiresAt: null }, working, now).status).toBe("disabled");
    expect(couponStatus({ moderation: "expired", expiresAt: null }, working, now).status).toBe("expired");
    expect(couponStatus({ moderation: "", expiresAt: now }, working, now).status).toBe("expired");
    expect(couponStatus({ moderation: "", expiresAt: new Date(now.getTime() + 1) }, working, now).status).toBe(
      "reported_working",
    );
  });

  it("days are UTC days", () => {
    expect(utcDay(new Date("2026-03-15T23:59:59.999Z"))).toBe("2026-03-15");
    expect(utcDay(new Date("2026-03-16T00:00:00Z"))).toBe("2026-03-16");
  });
});

describe("merchant transitions", () => {
  it("pending → approved or disabled, approved ⇄ disabled, never back to pending", () => {
    expect(merchantTransition("pending", "approved")).toBe("move");
    expect(merchantTransition("pending", "disabled")).toBe("move");
    expect(merchantTransition("approved", "disabled")).toBe("move");
    expect(merchantTransition("disabled", "approved")).toBe("move");
    expect(merchantTransition("approved", "approved")).toBe("same");
    expect(() => merchantTransition("approved", "pending")).toThrow(/cannot become pending/);
  });
});
