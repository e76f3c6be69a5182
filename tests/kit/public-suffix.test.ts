import { describe, expect, it } from "vitest";
import { isPublicSuffix, registrableDomain } from "../../services/kit/handler/public-suffix.js";

/** Hosting platforms whose customers each own a site under them: suffixes in the list's private section. */
const HOSTING_SUFFIXES = [
  "vercel.app",
  "netlify.app",
  "pages.dev",
  "web.app",
  "appspot.com",
  "azurewebsites.net",
  "cloudfront.net",
];

describe("public suffixes: the whole list, private section included", () => {
  it.each(HOSTING_SUFFIXES)("%s is a public suffix, and a site under it is registrable on its own", (suffix) => {
    expect(isPublicSuffix(suffix)).toBe(true);
    expect(registrableDomain(suffix)).toBeUndefined();
    expect(registrableDomain(`myshop.${suffix}`)).toBe(`myshop.${suffix}`);
    expect(registrableDomain(`www.myshop.${suffix}`)).toBe(`myshop.${suffix}`);
  });

  it("knows the suffixes under amazonaws.com (which Amazon itself registered, so it is not one)", () => {
    for (const suffix of ["s3.amazonaws.com", "x.compute.amazonaws.com", "s3.dualstack.ap-northeast-1.amazonaws.com"]) {
      expect(isPublicSuffix(suffix), suffix).toBe(true);
      expect(registrableDomain(`shop.${suffix}`), suffix).toBe(`shop.${suffix}`);
    }
    expect(registrableDomain("amazonaws.com")).toBe("amazonaws.com");
  });

  it.each([
    ["example.com", "example.com"],
    ["a.b.example.com", "example.com"],
    ["shop.example.co.uk", "example.co.uk"],
    ["example.com.au", "example.com.au"],
    ["store.myshopify.com", "store.myshopify.com"],
    ["a.store.myshopify.com", "store.myshopify.com"],
    ["xn--bcher-kva.de", "xn--bcher-kva.de"],
    // Wildcard *.ck: every x.ck is a suffix; the exception !www.ck is registrable.
    ["shop.foo.ck", "shop.foo.ck"],
    ["www.ck", "www.ck"],
    ["a.www.ck", "www.ck"],
    // A TLD missing from the list is still a suffix (the default rule `*`).
    ["example.zz", "example.zz"],
  ])("%s → %s", (host, registrable) => {
    expect(registrableDomain(host)).toBe(registrable);
  });

  it.each(["com", "co.uk", "com.au", "myshopify.com", "github.io", "blogspot.com", "foo.ck", "zz", "com.br", "co.za"])(
    "%s is a public suffix",
    (host) => expect(isPublicSuffix(host)).toBe(true),
  );

  it.each(["example.com", "example.co.uk", "myshop.vercel.app", "amazonaws.com"])("%s is not", (host) => {
    expect(isPublicSuffix(host)).toBe(false);
  });
});
