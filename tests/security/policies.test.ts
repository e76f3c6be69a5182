import { ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { beforeAll, describe, expect, it } from "vitest";
import { TipsOwnerService } from "../../gen/pf/tips/v1/owners_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import { PolicyRule } from "../../gen/pf/vip/v1/policies_pb.js";
import { VipService } from "../../gen/pf/vip/v1/vip_pb.js";
import type { TokenClaims } from "../../services/kit/auth/tokens.js";
import { PolicyRow } from "../../services/vip/db/entities.js";
import { usePlatform } from "../support/platform.js";
import { setProfile } from "../tips/support.js";
import { expectStatus, goalResource, person, serviceToken, userToken } from "../vip/support.js";

/**
 * Issue 11, "High 2": anyone could claim a membership rule on another
 * creator's resource (usr_b gated usr_a's goal; usr_a was then refused 409 and
 * evaluation called usr_b the owner). Ownership is now confirmed with the
 * service holding the resource before a rule is written.
 */
const t = usePlatform({ services: ["vip", "tips", "billing"] });

let a: string;
let b: string;
let tokenA: string;
let tokenB: string;
let staff: string;
let rpc: Transport;
beforeAll(async () => {
  [a, b] = [person("a"), person("b")];
  [tokenA, tokenB, staff] = [await userToken(t, a), await userToken(t, b), await serviceToken(t)];
  rpc = createConnectTransport({ baseUrl: t.platform.rpcUrl, httpVersion: "2" });
});

const anyMember = (resource: object, extra: Record<string, unknown> = {}) => ({
  resource,
  rule: "POLICY_RULE_ANY_MEMBER",
  ...extra,
});
const setPolicy = (token: string, body: object) => t.http("POST", "/vip/api/v1/policies", { token, body });
const evaluate = (subject: string, resource: object) =>
  t
    .http("POST", "/vip/api/v1/policies/evaluate", { token: staff, body: { subject, resource } })
    .then((answer) => expectStatus(answer, 200).body);

/** The problem code a call on the RPC port answers, or "ok". */
async function overRpc(call: () => Promise<unknown>): Promise<string> {
  try {
    await call();
    return "ok";
  } catch (error) {
    const [problem] = ConnectError.from(error).findDetails(ProblemSchema);
    return `${problem?.status ?? "?"} ${problem?.code ?? String(error)}`;
  }
}

describe("a membership rule on another creator's resource", () => {
  it("is refused (403 vip.not_owner) over the gateway and over RPC; the owner then sets it (201) and is its OWNER", async () => {
    const goal = await goalResource(t, tokenA);
    expectStatus(await setPolicy(tokenB, anyMember(goal)), 403, "vip.not_owner");
    const vip = createClient(VipService, rpc);
    const byRpc = () =>
      vip.setPolicy(
        { resource: goal, rule: PolicyRule.ANY_MEMBER },
        { headers: { authorization: `Bearer ${tokenB}` } },
      );
    expect(await overRpc(byRpc)).toBe("403 vip.not_owner");
    // Nothing was written: the goal is not gated.
    expect(await evaluate(b, goal)).toEqual({ allowed: true, reason: "EVALUATE_REASON_NO_POLICY" });

    const set = expectStatus(await setPolicy(tokenA, anyMember(goal)), 201).body.policy;
    expect(set).toMatchObject({ creator: a, resource: goal, set_by: a });
    expect(await evaluate(a, goal)).toMatchObject({ allowed: true, reason: "EVALUATE_REASON_OWNER" });
    expect(await evaluate(b, goal)).toMatchObject({ allowed: false, reason: "EVALUATE_REASON_NOT_MEMBER" });
    // Still refused once the owner's rule is there.
    expectStatus(await setPolicy(tokenB, anyMember(goal)), 403, "vip.not_owner");
  });

  it("is refused to staff too: staff set a creator's rule only on that creator's resource", async () => {
    const goalOfB = await goalResource(t, tokenB);
    expectStatus(await setPolicy(staff, anyMember(goalOfB, { creator: a })), 403, "vip.not_owner");
    const vouched = { "x-pf-subject": person("staff"), "x-pf-staff": "1" };
    const asStaff = await t.http("POST", "/vip/api/v1/policies", {
      token: staff,
      headers: vouched,
      body: anyMember(goalOfB, { creator: a }),
    });
    expectStatus(asStaff, 403, "vip.not_owner");
    // Nor the network's: no network rule on a creator's goal.
    expectStatus(await setPolicy(staff, anyMember(goalOfB, { creator: "network" })), 403, "vip.not_owner");
    expect(await evaluate(a, goalOfB)).toEqual({ allowed: true, reason: "EVALUATE_REASON_NO_POLICY" });
    const goalOfA = await goalResource(t, tokenA);
    expect(expectStatus(await setPolicy(staff, anyMember(goalOfA, { creator: a })), 201).body.policy).toMatchObject({
      creator: a,
    });
  });

  it("written before owners were confirmed, gives way to the owner's rule (201, the owner's own) instead of 409", async () => {
    const goal = await goalResource(t, tokenA);
    const vip = t.platform.contexts.get("vip")!;
    await vip.transaction(async (em) => {
      const at = new Date();
      em.create(PolicyRow, {
        id: `pol_squat${Date.now().toString(36)}`,
        creator: b,
        resourceService: goal.service,
        resourceKind: goal.kind,
        resourceId: goal.id,
        rule: "any_member",
        alwaysCheckBilling: false,
        setBy: b,
        createdAt: at,
        updatedAt: at,
      });
      await em.flush();
    });
    expect(await evaluate(b, goal)).toMatchObject({ reason: "EVALUATE_REASON_OWNER" });

    const set = expectStatus(await setPolicy(tokenA, anyMember(goal)), 201).body.policy;
    expect(set).toMatchObject({ creator: a, set_by: a });
    expect(set.id).not.toMatch(/^pol_squat/);
    expect(await evaluate(a, goal)).toMatchObject({ allowed: true, reason: "EVALUATE_REASON_OWNER" });
    expect(await evaluate(b, goal)).toMatchObject({ allowed: false, reason: "EVALUATE_REASON_NOT_MEMBER" });
  });
});

describe("a resource no service holds", () => {
  it("is refused 422 naming the field: an unknown service, a missing goal, a kind tips does not hold", async () => {
    const unknown = (await setPolicy(tokenA, anyMember({ service: "media", kind: "video", id: "vid_1" }))).body;
    expect(unknown).toMatchObject({ status: 422, code: "request.invalid", field: "resource.service" });
    expect(unknown.detail).toContain("tips");
    expect(unknown.detail).toContain("vip");
    const missing = (await setPolicy(tokenA, anyMember({ service: "tips", kind: "goal", id: "gol_missing" }))).body;
    expect(missing).toMatchObject({ status: 422, code: "request.invalid", field: "resource.id" });
    expect(missing.detail).toBe("resource.id names no goal of tips");
    const goal = await goalResource(t, tokenA);
    expect((await setPolicy(tokenA, anyMember({ ...goal, kind: "interaction" }))).body).toMatchObject({
      status: 422,
      field: "resource.id",
    });
    expect(
      (await setPolicy(tokenA, anyMember({ service: "vip", kind: "plan", id: "pln_missing" }))).body,
    ).toMatchObject({ status: 422, field: "resource.id" });
  });
});

describe("tips' ResolveOwner", () => {
  const ask = async (claims: TokenClaims, kind: string, id: string) => {
    const tips = createClient(TipsOwnerService, rpc);
    const token = await t.token(claims);
    let owner = "";
    const outcome = await overRpc(async () => {
      owner = (await tips.resolveOwner({ kind, id }, { headers: { authorization: `Bearer ${token}` } })).owner;
    });
    return outcome === "ok" ? { owner } : outcome;
  };
  const vip: TokenClaims = { kind: "service", svc: "vip", caps: ["tips.owner.resolve"] };

  it("answers vip the creator of a goal or a profile, and no owner for anything else", async () => {
    const goal = await goalResource(t, tokenA);
    expect(await ask(vip, "goal", goal.id)).toEqual({ owner: a });
    expect(await ask(vip, "goal", "gol_missing")).toEqual({ owner: "" });
    await setProfile(t, b);
    expect(await ask(vip, "profile", b)).toEqual({ owner: b });
    expect(await ask(vip, "profile", person("none"))).toEqual({ owner: "" });
    expect(await ask(vip, "constructor", goal.id)).toEqual({ owner: "" });
  });

  it("answers the vip service only: other services, people and tokens without the capability are refused", async () => {
    const goal = await goalResource(t, tokenA);
    expect(await ask({ ...vip, svc: "community" }, "goal", goal.id)).toBe("403 auth.service_not_allowed");
    expect(await ask({ ...vip, caps: ["vip.plan.list"] }, "goal", goal.id)).toBe("403 auth.capability_missing");
    expect(await ask({ kind: "user", sub: b }, "goal", goal.id)).toBe("403 auth.internal_only");
  });
});

describe("when tips does not answer", () => {
  const alone = usePlatform({ services: ["vip"] });

  it("a rule on a tips resource is 503 tips.unavailable, and nothing is written", async () => {
    const token = await userToken(alone, a);
    const body = anyMember({ service: "tips", kind: "goal", id: "gol_1" });
    expectStatus(await alone.http("POST", "/vip/api/v1/policies", { token, body }), 503, "tips.unavailable");
    expect((await alone.http("GET", "/vip/api/v1/policies", { token })).body.policies.policies).toEqual([]);
  });
});
