import { describe, expect, it } from "vitest";
import { addressRefusal, parseAddress } from "../../services/kit/outbound/addresses.js";
import { REFUSED } from "../support/refused-addresses.js";

/** Odd IPv4 spellings and the address each means. */
const SPELLINGS: [written: string, meant: string][] = [
  ["2130706433", "127.0.0.1"],
  ["0177.0.0.1", "127.0.0.1"],
  ["0x7f.1", "127.0.0.1"],
  ["0x7f000001", "127.0.0.1"],
  ["127.1", "127.0.0.1"],
  ["0177.1", "127.0.0.1"],
  ["10.1", "10.0.0.1"],
  ["0xa9.0xfe.0xa9.0xfe", "169.254.169.254"],
  ["2852039166", "169.254.169.254"],
  ["127.0.0.1.", "127.0.0.1"],
  ["[::1]", "::1"],
];

describe("outbound addresses", () => {
  it.each(REFUSED)("refuses %s (%s)", (address, range) => {
    expect(addressRefusal(address)).toMatch(range);
  });

  it.each(SPELLINGS)("reads %s as %s, and refuses it", (written, meant) => {
    expect(parseAddress(written)?.toString()).toBe(meant);
    expect(addressRefusal(written)).toBeDefined();
  });

  it.each([
    "8.8.8.8",
    "93.184.216.34",
    "1.1.1.1",
    "172.32.0.1",
    "100.128.0.1",
    "2606:4700::1111",
    "2a00:1450:4001::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
  ])("lets the public address %s through", (address) => {
    expect(addressRefusal(address)).toBeUndefined();
  });

  it("takes names and zone indexes for no address", () => {
    for (const host of ["example.com", "localhost", "fe80::1%eth0", "1.2.3.256", "08.1.1.1"])
      expect(parseAddress(host)).toBeUndefined();
    expect(addressRefusal("localhost")).toBe("not an IP address");
  });
});
