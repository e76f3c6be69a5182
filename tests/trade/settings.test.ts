import { describe, expect, it } from "vitest";
import { startTestPlatform } from "../support/platform.js";

/**
 * Settings are read and checked when the host builds the service's context at start: a bad value stops the start
 * naming the setting, never a 500 on every request that reads it later.
 */
describe("trade's settings at start", () => {
  it.each([
    ["PF_TRADE_EDITORS", "usr_a1,alice"],
    ["PF_TRADE_EDITORS", "usr_ABC"],
    ["PF_TRADE_WATCHLISTS_PER_PERSON", "many"],
  ])("refuses to start with a bad %s (%s), naming it", async (name, value) => {
    await expect(startTestPlatform({ services: ["trade"], env: { [name]: value } })).rejects.toThrow(name);
  });

  it("starts with good editors, and answers them as the seeded list", async () => {
    const t = await startTestPlatform({ services: ["trade"], env: { PF_TRADE_EDITORS: " usr_a1 , usr_b2 ," } });
    try {
      expect(t.platform.contexts.get("trade")?.editors).toEqual(["usr_a1", "usr_b2"]);
    } finally {
      await t.stop();
    }
  });
});
