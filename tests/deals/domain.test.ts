import { describe, expect, it } from "vitest";
import { hotness } from "../../services/kit/handler/hotness.js";
import { tallyVotes, voteWeight } from "../../services/deals/domain/hotness.js";
import { linkKey } from "../../services/deals/domain/links.js";
import { offerStatus } from "../../services/deals/domain/offers.js";
import { normaliseAlias } from "../../services/deals/domain/products.js";
import { staffActorOf } from "../../services/kit/auth/principal.js";
import { watchMatches } from "../../services/deals/domain/watches.js";

const at = (iso: string) => new Date(iso);

describe("hot@1", () => {
  it("is log10 of the score plus the age term: ten times the score equals 12.5 hours newer", () => {
    expect(hotness(0, at("2026-01-01T00:00:00Z"))).toBe(0);
    expect(hotness(10, at("2026-01-01T00:00:00Z"))).toBe(1);
    expect(hotness(-10, at("2026-01-01T00:00:00Z"))).toBe(-1);
    expect(hotness(1, at("2026-01-01T12:30:00Z"))).toBe(hotness(10, at("2026-01-01T00:00:00Z")));
    expect(hotness(100, at("2026-01-02T00:00:00Z"))).toBeGreaterThan(hotness(100, at("2026-01-01T00:00:00Z")));
  });

  it("counts a voter once, with their latest vote, weighted by the service", () => {
    expect(voteWeight("usr_a")).toBe(1);
    expect(voteWeight("gst_a")).toBe(0.5);
    const tally = tallyVotes([
      { voter: "usr_a", value: 1, weight: 1, at: at("2026-01-01T00:00:00Z") },
      { voter: "usr_a", value: -1, weight: 1, at: at("2026-01-02T00:00:00Z") },
      { voter: "gst_b", value: 1, weight: 0.5, at: at("2026-01-01T00:00:00Z") },
    ]);
    expect(tally).toEqual({ score: -0.5, up: 1, down: 1, voters: 2 });
  });
});

describe("rules", () => {
  it("a link's key ignores case of host, www., fragments, tracking parameters and trailing slashes", () => {
    expect(linkKey("link", "https://WWW.Shop.example/a/?utm_source=x&b=2&a=1#f")).toBe(
      linkKey("link", "http://shop.example/a?a=1&b=2"),
    );
    expect(linkKey("link", "https://shop.example/a")).not.toBe(linkKey("link", "https://shop.example/b"));
  });

  it("status: merged over disabled over expired, each undone by clearing its own column", () => {
    const d = new Date();
    expect(offerStatus({ mergedInto: "off_1", disabledAt: d, expiredAt: d }, d)).toBe("merged");
    expect(offerStatus({ mergedInto: null, disabledAt: d, expiredAt: d }, d)).toBe("disabled");
    expect(offerStatus({ mergedInto: null, disabledAt: null, expiredAt: d }, d)).toBe("expired");
    expect(offerStatus({ mergedInto: null, disabledAt: null, expiredAt: null }, d)).toBe("active");
  });

  it("status: past its stated end an offer is expired before the expiry worker records it", () => {
    const now = new Date("2026-05-02T00:00:00Z");
    expect(offerStatus({ expiredAt: null, expiresAt: new Date("2026-05-02T00:00:00Z") }, now)).toBe("expired");
    expect(offerStatus({ expiredAt: null, expiresAt: new Date("2026-05-02T00:00:01Z") }, now)).toBe("active");
    expect(offerStatus({ disabledAt: now, expiredAt: null, expiresAt: now }, now)).toBe("disabled");
  });

  it("moderators: a service or app acting for nobody, or for a person it states is staff; never a person, whatever the capabilities", () => {
    const base = { caps: new Set<string>(), fp: true, ns: [], staff: false };
    expect(staffActorOf({ ...base, kind: "service", sub: "svc:web" })).toBe("svc:web");
    expect(staffActorOf({ ...base, kind: "app", sub: "app:console" })).toBe("app:console");
    expect(staffActorOf({ ...base, kind: "service", sub: "svc:web", actingSubject: "usr_a", staff: true })).toBe(
      "usr_a",
    );
    expect(
      staffActorOf({
        ...base,
        kind: "service",
        sub: "svc:web",
        actingSubject: "usr_a",
        caps: new Set(["deals.offer.moderate"]),
      }),
    ).toBeUndefined();
    expect(
      staffActorOf({ ...base, kind: "user", sub: "usr_a", caps: new Set(["deals.offer.moderate"]) }),
    ).toBeUndefined();
    expect(staffActorOf({ ...base, kind: "anonymous", sub: "" })).toBeUndefined();
  });

  it("aliases normalise: GTIN to 14 digits, part numbers without spaces or dashes, exact names with case kept", () => {
    expect(normaliseAlias("gtin", "96385074")).toBe("00000096385074");
    expect(normaliseAlias("sku", " ab-1 2 ")).toBe("AB12");
    expect(normaliseAlias("name", " Stabilo   Pen")).toBe("Stabilo Pen");
    expect(normaliseAlias("name", "Cafe\u0301")).toBe(normaliseAlias("name", "Caf\u00e9"));
    expect(normaliseAlias("url", "https://www.x.example/p/")).toBe("x.example/p");
  });

  it("watches: keyword needs every word; price-below needs its currency and scope; saved searches never match", () => {
    const offer = {
      title: "LEGO Castle 10305",
      description: "",
      productId: "prd_1",
      price: { minor: 999n, currency: "EUR" },
    };
    const watch = { keyword: "", productId: null, priceBelow: null };
    expect(watchMatches({ ...watch, kind: "keyword", keyword: "lego castle" }, offer)).toBe(true);
    expect(watchMatches({ ...watch, kind: "keyword", keyword: "lego ship" }, offer)).toBe(false);
    expect(watchMatches({ ...watch, kind: "saved_search", keyword: "lego" }, offer)).toBe(false);
    expect(watchMatches({ ...watch, kind: "product", productId: "prd_1" }, offer)).toBe(true);
    const below = { ...watch, kind: "price_below" as const, productId: "prd_1" };
    expect(watchMatches({ ...below, priceBelow: { minor: 1000n, currency: "EUR" } }, offer)).toBe(true);
    expect(watchMatches({ ...below, priceBelow: { minor: 999n, currency: "EUR" } }, offer)).toBe(false);
    expect(watchMatches({ ...below, priceBelow: { minor: 1000n, currency: "USD" } }, offer)).toBe(false);
  });
});
