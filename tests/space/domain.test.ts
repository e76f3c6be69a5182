import { describe, expect, it } from "vitest";
import { checkPosition } from "../../services/space/domain/ordering.js";
import { opens, parseSeed } from "../../services/space/domain/spaces.js";

describe("cursor positions", () => {
  it("accept only their own ordering's shape", () => {
    expect(checkPosition("new", [1, "2026-06-01T00:00:00.000Z", "thr_a1"])).toBeDefined();
    expect(checkPosition("hot", [0, 1.5, "thr_a1"])).toBeDefined();
    expect(checkPosition("top", [0, 3, "2026-06-01T00:00:00.000Z", "thr_a1"])).toBeDefined();
    expect(checkPosition("top", [0, 1.5, "thr_a1"])).toBeUndefined();
    expect(checkPosition("new", [2, "2026-06-01T00:00:00.000Z", "thr_a1"])).toBeUndefined();
    expect(checkPosition("hot", [0, "1", "thr_a1"])).toBeUndefined();
    expect(checkPosition("hot", [0, 1, "x'; drop table threads"])).toBeUndefined();
  });
});

describe("visibility", () => {
  it("anonymous callers open public spaces; members also members spaces; moderators also staff spaces", () => {
    expect([opens("public", "anonymous"), opens("members", "anonymous"), opens("staff", "anonymous")]).toEqual([
      true,
      false,
      false,
    ]);
    expect([opens("public", "member"), opens("members", "member"), opens("staff", "member")]).toEqual([
      true,
      true,
      false,
    ]);
    expect([opens("public", "moderator"), opens("members", "moderator"), opens("staff", "moderator")]).toEqual([
      true,
      true,
      true,
    ]);
  });
});

describe("PF_SPACE_SEED", () => {
  it("reads spaces, and stops startup naming what is wrong", () => {
    expect(parseSeed("")).toEqual([]);
    expect(
      parseSeed(
        '[{"key":"general","title":"General"},{"key":"vip","title":"V","members_only":true,"vip_creator":"network"}]',
      ),
    ).toEqual([
      { key: "general", title: "General", description: "", visibility: "public", membersOnly: false, vipCreator: "" },
      { key: "vip", title: "V", description: "", visibility: "public", membersOnly: true, vipCreator: "network" },
    ]);
    expect(() => parseSeed("{")).toThrow(/JSON array/);
    expect(() => parseSeed('[{"key":"Bad Key","title":"x"}]')).toThrow(/PF_SPACE_SEED\[0\]\.key/);
    expect(() => parseSeed('[{"key":"feed","title":"x"}]')).toThrow(/key/);
    expect(() => parseSeed('[{"key":"a","title":"x","visibility":"secret"}]')).toThrow(/visibility/);
    expect(() => parseSeed('[{"key":"a","title":"x","members_only":true}]')).toThrow(/vip_creator/);
  });
});
