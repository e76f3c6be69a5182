import { describe, expect, it } from "vitest";
import { BatchFailure, subjectMatches } from "../../services/kit/events/bus.js";
import { InProcessBus } from "../../services/kit/events/memory-bus.js";
import { createLogger } from "../../services/kit/runtime/logger.js";

describe("subject patterns", () => {
  it.each([
    ["deals.watch.matched", "deals.watch.matched", true],
    ["deals.*.matched", "deals.watch.matched", true],
    ["games.mod.*", "games.mod.enabled", true],
    ["games.mod.*", "games.mod.enabled.now", false],
    ["games.>", "games.mod.enabled", true],
    ["games.>", "games", false],
    ["tips.*", "deals.watch", false],
  ])("%s ~ %s is %s", (pattern, subject, expected) => {
    expect(subjectMatches(pattern, subject)).toBe(expected);
  });
});

describe("the in-process bus (NATS_URL unset)", () => {
  it("delivers to matching subscribers once per event id", async () => {
    const bus = new InProcessBus(createLogger("silent"));
    const seen: string[] = [];
    bus.subscribe("network.>", (message) => void seen.push(message.subject));
    bus.subscribe("deals.>", () => void seen.push("wrong"));
    const data = new TextEncoder().encode("{}");
    await bus.publish("network.coins.credited", "evt_1", data, {});
    await bus.publish("network.coins.credited", "evt_1", data, {});
    await bus.publish("network.notification.pushed", "evt_2", data, {});
    expect(seen).toEqual(["network.coins.credited", "network.notification.pushed"]);
  });

  it("hands a durable consumer the events published together as one batch; from its first failure on, they fail", async () => {
    const bus = new InProcessBus(createLogger("silent"));
    const batches: string[][] = [];
    await bus.consume("network.>", "probe", "all", async (messages) => {
      batches.push(messages.map((message) => message.headers.n));
      const failing = messages.findIndex((message) => message.headers.n === "b");
      if (failing !== -1 && batches.length === 1)
        throw new BatchFailure(new Set(Array.from({ length: failing }, (_, before) => before)), new Error("busy"));
    });
    const data = new TextEncoder().encode("{}");
    const publish = () =>
      Promise.allSettled(["a", "b", "c"].map((n) => bus.publish("network.coins.credited", `evt_${n}`, data, { n })));
    const first = await publish();
    expect(batches).toEqual([["a", "b", "c"]]);
    expect(first.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "rejected"]);
    // Sent again, as the relay does: the ones not applied come together, the one applied does not come twice.
    const again = await publish();
    expect(batches).toEqual([
      ["a", "b", "c"],
      ["b", "c"],
    ]);
    expect(again.every((outcome) => outcome.status === "fulfilled")).toBe(true);
  });
});
