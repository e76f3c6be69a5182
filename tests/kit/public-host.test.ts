import { describe, expect, it } from "vitest";
import { problemOf } from "../../services/kit/handler/problem.js";
import { isPublicHost, requirePublicUrl } from "../../services/kit/outbound/public-host.js";

const hostOf = (url: string) => new URL(url).hostname;

describe("a public host", () => {
  it("is a name of two labels or more, or a public IPv4 or IPv6 address", () => {
    for (const url of [
      "https://shop.example/",
      "https://SHOP.example./",
      "http://93.184.216.34/",
      "http://[2606:4700::1111]/",
      "http://[::ffff:8.8.8.8]/",
    ])
      expect(isPublicHost(hostOf(url)), url).toBe(true);
  });

  it("is never loopback, private, link-local, unspecified, multicast or reserved, however the address is written", () => {
    for (const url of [
      "http://127.0.0.1/",
      "http://127.1/",
      "http://2130706433/",
      "http://017700000001/",
      "http://0x7f.0.0.1/",
      "http://0/",
      "http://10.0.0.1/",
      "http://172.16.0.1/",
      "http://172.31.255.255/",
      "http://192.168.0.1/",
      "http://100.64.0.1/",
      "http://169.254.169.254/",
      "http://224.0.0.1/",
      "http://255.255.255.255/",
      "http://[::]/",
      "http://[::1]/",
      "http://[0:0:0:0:0:0:0:1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://[::ffff:a9fe:a9fe]/",
      "http://[::127.0.0.1]/",
      "http://[64:ff9b::7f00:1]/",
      "http://[2002:7f00:1::]/",
      "http://[fe80::1]/",
      "http://[fc00::1]/",
      "http://[fd12:3456::1]/",
      "http://[ff02::1]/",
    ])
      expect(isPublicHost(hostOf(url)), url).toBe(false);
  });

  it("is never localhost, a name under it or another local zone, nor a single label", () => {
    for (const url of [
      "http://localhost/",
      "http://LOCALHOST./",
      "http://api.localhost/",
      "http://printer.local/",
      "http://db.internal/",
      "http://nas.home.arpa/",
      "http://intranet/",
    ])
      expect(isPublicHost(hostOf(url)), url).toBe(false);
  });
});

describe("requirePublicUrl", () => {
  const refusal = (value: string) => {
    try {
      requirePublicUrl("link", value, ["http", "https"]);
      return undefined;
    } catch (error) {
      const problem = problemOf(error);
      return `${problem.code} ${String(problem.extensions?.field as string | undefined)}`;
    }
  };

  it("takes a public http(s) link and refuses user info and non-public hosts naming the field", () => {
    expect(refusal("https://shop.example/a?b=1")).toBeUndefined();
    expect(refusal("https://user:pass@shop.example/a")).toBe("request.invalid link");
    expect(refusal("https://user@shop.example/a")).toBe("request.invalid link");
    expect(refusal("https://:pass@shop.example/a")).toBe("request.invalid link");
    expect(refusal("http://[::1]:8080/a")).toBe("request.invalid link");
    expect(refusal("ftp://shop.example/a")).toBe("request.invalid link");
  });
});
