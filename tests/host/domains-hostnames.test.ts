import { describe, expect, it } from "vitest";
import { customHostname, routingRecords, verificationRecord } from "../../services/host/domain/hostnames.js";

const PLATFORM = ["sites.pf.dev", "pf.dev"];
const judge = (input: string) => customHostname(input, PLATFORM);

describe("custom domain names (domain/hostnames.ts)", () => {
  it("normalises: trimmed, lower case, punycode, no trailing dot", () => {
    expect(judge("  Shop.Example-Store.COM. ")).toEqual({ hostname: "shop.example-store.com" });
    expect(judge("bücher.de")).toEqual({ hostname: "xn--bcher-kva.de" });
    expect(judge("xn--bcher-kva.de")).toEqual({ hostname: "xn--bcher-kva.de" });
    // Full-width letters are the ASCII ones once mapped.
    expect(judge("ｓｈｏｐ.example-store.com")).toEqual({ hostname: "shop.example-store.com" });
  });

  it("refuses IP addresses in every spelling: v4, v6, bracketed, and what the URL parser reads as v4", () => {
    for (const input of ["192.0.2.1", "::1", "2001:db8::1", "[2001:db8::1]", "[::1]", "0x7f.1", "127.1", "0300.0.2.1"])
      expect(judge(input).refused, input).toMatch(/IP address/);
  });

  it("refuses a single label, and localhost, .local, .internal, .test, .example, .invalid and what lies under them", () => {
    expect(judge("intranet").refused).toMatch(/single label/);
    for (const input of [
      "localhost",
      "shop.localhost",
      "printer.local",
      "db.corp.internal",
      "site.test",
      "www.example",
      "x.invalid",
      "hidden.onion",
      "1.2.in-addr.arpa",
    ])
      expect(judge(input).refused, input).toMatch(/reserved for special use/);
  });

  it("refuses a platform domain and every name under one", () => {
    expect(judge("pf.dev").refused).toMatch(/belong to the platform/);
    expect(judge("sites.pf.dev").refused).toMatch(/belong to the platform/);
    expect(judge("evil.sites.pf.dev").refused).toMatch(/belong to the platform/);
    expect(judge("API.PF.DEV.").refused).toMatch(/belong to the platform/);
    // A name that only ends with the same letters is someone else's.
    expect(judge("notpf.dev")).toEqual({ hostname: "notpf.dev" });
  });

  it("refuses a public suffix, the private section included, but not a name registered under one", () => {
    for (const input of ["com", "co.uk", "github.io", "vercel.app", "s3.amazonaws.com"])
      expect(judge(input).refused, input).toBeDefined();
    expect(judge("co.uk").refused).toMatch(/public suffix/);
    expect(judge("github.io").refused).toMatch(/public suffix/);
    expect(judge("shop.co.uk")).toEqual({ hostname: "shop.co.uk" });
    expect(judge("me.github.io")).toEqual({ hostname: "me.github.io" });
  });

  it("refuses labels over 63 characters, names over 253, and characters no host name has", () => {
    expect(judge(`${"a".repeat(64)}.com`).refused).toMatch(/longer than 63/);
    expect(judge(`${"a".repeat(63)}.com`)).toEqual({ hostname: `${"a".repeat(63)}.com` });
    expect(judge(`${"a.".repeat(127)}com`).refused).toMatch(/not a valid domain name/);
    for (const input of ["a_b.com", "-shop.com", "shop-.com", "*.shop.com", "a..com", ".shop.com", "sh op.com", ""])
      expect(judge(input).refused, input).toBeDefined();
  });

  it("answers the TXT record that verifies a domain", () => {
    expect(verificationRecord("shop.example-store.com", "abc")).toEqual({
      type: "TXT",
      name: "_pf-verify.shop.example-store.com",
      value: "pf-verify=abc",
    });
  });

  it("routes a subdomain by a CNAME to the site's host, an apex by A and AAAA records of the edge", () => {
    expect(routingRecords("www.shop.co.uk", "shop.sites.pf.dev", ["192.0.2.10"])).toEqual([
      { type: "CNAME", name: "www.shop.co.uk", value: "shop.sites.pf.dev" },
    ]);
    expect(routingRecords("shop.co.uk", "shop.sites.pf.dev", ["192.0.2.10", "2001:db8::10"])).toEqual([
      { type: "A", name: "shop.co.uk", value: "192.0.2.10" },
      { type: "AAAA", name: "shop.co.uk", value: "2001:db8::10" },
    ]);
    expect(routingRecords("shop.co.uk", "shop.sites.pf.dev", [])).toEqual([]);
  });
});
