import { describe, expect, it } from "vitest";
import { problemOf } from "../../services/kit/handler/problem.js";
import { STREAM_RETRY_AFTER_SECONDS, StreamSlots } from "../../services/kit/rpc/stream-slots.js";

const rules = (token: string, address: string) => [
  { name: "x.stream.token", key: token, limit: 2 },
  { name: "x.stream.address", key: address, limit: 3 },
];

function refusal(take: () => unknown) {
  try {
    take();
  } catch (error) {
    return problemOf(error);
  }
  throw new Error("not refused");
}

describe("StreamSlots", () => {
  it("takes a slot under every rule up to its limit, then 429 rate.limited naming the full rule", () => {
    const slots = new StreamSlots();
    slots.take(rules("t1", "a"));
    slots.take(rules("t1", "a"));
    const full = refusal(() => slots.take(rules("t1", "a")));
    expect(full).toMatchObject({ status: 429, code: "rate.limited" });
    expect(full.extensions).toEqual({ rule: "x.stream.token", retry_after_seconds: STREAM_RETRY_AFTER_SECONDS });
    slots.take(rules("t2", "a"));
    expect(refusal(() => slots.take(rules("t3", "a"))).extensions).toMatchObject({ rule: "x.stream.address" });
    slots.take(rules("t3", "b"));
  });

  it("takes none when one rule is full, and a release frees each slot once", () => {
    const slots = new StreamSlots();
    const first = slots.take(rules("t1", "a"));
    slots.take(rules("t1", "b"));
    refusal(() => slots.take(rules("t1", "c")));
    // The refusal took no slot of address c.
    slots.take(rules("t2", "c"));
    slots.take(rules("t2", "c"));
    first();
    first();
    slots.take(rules("t1", "c"));
    refusal(() => slots.take(rules("t1", "a")));
  });

  it("counts nothing under an empty key (a caller not through the gateway has no address)", () => {
    const slots = new StreamSlots();
    for (let i = 0; i < 10; i++) slots.take(rules(`t${i}`, ""));
    slots.take(rules("t1", ""));
    expect(refusal(() => slots.take(rules("t1", ""))).extensions).toMatchObject({ rule: "x.stream.token" });
  });
});
