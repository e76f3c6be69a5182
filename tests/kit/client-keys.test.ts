import { describe, expect, it } from "vitest";
import { CLIENT_IP_HEADER, ClientKeys, ipv6Block } from "../../services/kit/handler/client-address.js";
import { loadConfig } from "../../services/kit/runtime/config.js";

const keys = (key: string) => ClientKeys.load(loadConfig({ PF_IP_HASH_KEY: key }));
const from = (ip: string) => new Headers({ [CLIENT_IP_HEADER]: ip });

describe("client keys", () => {
  it("hash the address under the key, never showing it, and are stable for one key", async () => {
    const [a, b] = [await keys("one"), await keys("two")];
    expect(a.of(from("203.0.113.7"))).toBe(a.of(from("203.0.113.7")));
    expect(a.of(from("203.0.113.7"))).not.toBe(a.of(from("203.0.113.8")));
    expect(a.of(from("203.0.113.7"))).not.toBe(b.of(from("203.0.113.7")));
    expect(a.of(from("203.0.113.7"))).not.toContain("203");
  });

  it("count an IPv6 client by its /64", async () => {
    const a = await keys("one");
    expect(a.of(from("2001:db8:1:2::1"))).toBe(a.of(from("2001:db8:1:2:ffff:1:2:3")));
    expect(a.of(from("2001:db8:1:2::1"))).not.toBe(a.of(from("2001:db8:1:3::1")));
    expect(ipv6Block("2001:DB8::1")).toBe("2001:0db8:0000:0000::/64");
    expect(ipv6Block("::1")).toBe("0000:0000:0000:0000::/64");
  });

  it("are empty for calls that did not come through the gateway", async () => {
    expect((await keys("one")).of(new Headers())).toBe("");
  });
});
