import { describe, expect, it } from "vitest";
import { Lru } from "../../services/kit/runtime/lru.js";

describe("Lru", () => {
  it("drops the least recently used past its entries, a read counting as a use", () => {
    const lru = new Lru<number>({ maxEntries: 2 });
    lru.set("a", 1);
    lru.set("b", 2);
    expect(lru.get("a")).toBe(1);
    lru.set("c", 3);
    expect([lru.get("a"), lru.get("b"), lru.get("c")]).toEqual([1, undefined, 3]);
  });

  it("drops the oldest past its weight, keeping a newest that weighs more than the bound alone", () => {
    const lru = new Lru<number[]>({ maxWeight: 4, weigh: (files) => files.length });
    lru.set("a", [1, 2]);
    lru.set("b", [1, 2]);
    expect(lru.weight).toBe(4);
    lru.set("c", [1]);
    expect([lru.get("a"), lru.get("b")?.length, lru.weight]).toEqual([undefined, 2, 3]);
    lru.set("big", [1, 2, 3, 4, 5]);
    expect([lru.get("b"), lru.get("c"), lru.get("big")?.length, lru.weight]).toEqual([undefined, undefined, 5, 5]);
  });

  it("refuses an oversized entry when told to, and forgets all on clear", () => {
    const lru = new Lru<string>({ maxWeight: 3, weigh: (text) => text.length, refuseOversized: true });
    lru.set("a", "abc");
    lru.set("b", "abcd");
    expect([lru.get("a"), lru.get("b")]).toEqual(["abc", undefined]);
    lru.delete("a");
    expect(lru.weight).toBe(0);
    lru.set("c", "ab");
    lru.clear();
    expect([lru.get("c"), lru.weight]).toEqual([undefined, 0]);
  });
});
