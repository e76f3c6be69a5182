import { describe, expect, it } from "vitest";
import { subjectMatches } from "../../services/kit/events/bus.js";
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
});
