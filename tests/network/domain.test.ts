import { getOption } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { CoinsChangeRequestSchema, CoinsTransferRequestSchema, StaffRole } from "../../gen/pf/network/v1/network_pb.js";
import { rules } from "../../gen/pf/v1/options_pb.js";
import { ANONYMOUS, type Principal } from "../../services/kit/auth/principal.js";
import { balanceAfter, coinsAppId, lockOrder, MAX_COINS } from "../../services/network/domain/coins.js";
import { mayRead, ownsNamespace } from "../../services/network/domain/namespaces.js";
import { byRank } from "../../services/network/domain/staff.js";

const as = (fields: Partial<Principal>): Principal => ({ ...ANONYMOUS, ...fields });

describe("coin rules", () => {
  it("move 1 to MAX_COINS in one change, as the contract's rule on amount says", () => {
    for (const request of [CoinsChangeRequestSchema, CoinsTransferRequestSchema]) {
      const { type } = getOption(request.field.amount, rules);
      expect(type.case === "int64" && [type.value.greaterThan.value, type.value.lessThan.value]).toEqual([
        1n,
        MAX_COINS,
      ]);
    }
  });

  it("never leave a balance below zero or past MAX_COINS", () => {
    expect(balanceAfter("usr_a", 5n, -5n)).toBe(0n);
    expect(() => balanceAfter("usr_a", 5n, -6n)).toThrow(/short/);
    expect(() => balanceAfter("usr_a", MAX_COINS, 1n)).toThrow(/at most/);
  });

  it("act only for the token's own app_id", () => {
    expect(coinsAppId(as({ kind: "service", appId: "app1" }), "")).toBe("app1");
    expect(coinsAppId(as({ kind: "service", appId: "app1" }), "app1")).toBe("app1");
    expect(() => coinsAppId(as({ kind: "service", appId: "app1" }), "app2")).toThrow(/own app_id/);
    expect(() => coinsAppId(as({ kind: "service" }), "app1")).toThrow(/app_id/);
  });

  it("lock two accounts in one order whichever pays", () => {
    expect(lockOrder("usr_b", "usr_a")).toEqual(["usr_a", "usr_b"]);
    expect(lockOrder("usr_a", "usr_b")).toEqual(["usr_a", "usr_b"]);
  });
});

describe("module namespaces", () => {
  it("belong to the service of their first part", () => {
    const space = as({ kind: "service", service: "space" });
    expect(ownsNamespace(space, "space")).toBe(true);
    expect(ownsNamespace(space, "space.prefs")).toBe(true);
    expect(ownsNamespace(space, "spaces")).toBe(false);
    expect(ownsNamespace(as({ kind: "user", sub: "usr_a" }), "space")).toBe(false);
  });

  it("are read where owned or granted by the ns claim", () => {
    expect(mayRead(as({ kind: "service", service: "blog", ns: ["space.prefs"] }), "space.prefs")).toBe(true);
    expect(mayRead(as({ kind: "service", service: "space" }), "space.prefs")).toBe(true);
    expect(mayRead(as({ kind: "service", service: "blog" }), "space.prefs")).toBe(false);
    expect(mayRead(as({ kind: "app", appId: "a1", ns: ["space"] }), "space")).toBe(true);
  });
});

describe("staff order", () => {
  it("reads owner, admins, then global moderators, each by subject", () => {
    const staff = [
      { role: StaffRole.GLOBAL_MODERATOR, subject: "usr_a" },
      { role: StaffRole.ADMIN, subject: "usr_c" },
      { role: StaffRole.OWNER, subject: "usr_z" },
      { role: StaffRole.ADMIN, subject: "usr_b" },
    ];
    expect(staff.sort(byRank).map((s) => s.subject)).toEqual(["usr_z", "usr_b", "usr_c", "usr_a"]);
  });
});
