import { getOption } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { beforeAll, describe, expect, it } from "vitest";
import { CouponsService } from "../../gen/pf/coupons/v1/coupons_pb.js";
import { DealsService } from "../../gen/pf/deals/v1/deals_pb.js";
import { rate_limits } from "../../gen/pf/v1/options_pb.js";
import { ManualClock } from "../../services/kit/runtime/clock.js";
import { ALL_DEALS, person, submit } from "../deals/support.js";
import { usePlatform } from "../support/platform.js";

// The clock stands still mid-minute, so no rate window ends between the calls.
const t = usePlatform({
  services: ["coupons", "deals"],
  env: { PF_DEALS_VOTES_PER_IP_MINUTE: "3" },
  clock: new ManualClock(new Date(Math.floor(Date.now() / 60_000) * 60_000 + 30_000)),
});
let web: string;

beforeAll(async () => {
  web = await t.token({ kind: "service", svc: "web", caps: ALL_DEALS });
});

const overRpc = () => createGrpcTransport({ baseUrl: t.platform.rpcUrl });
const refusal = (error: unknown) => ConnectError.from(error);

describe("pf-client-ip sent to the RPC port", () => {
  it("is ignored unless a gateway vouches for it: anonymous lookups are counted by the socket's peer", async () => {
    const coupons = createClient(CouponsService, overRpc());
    const lookup = (n: number) =>
      coupons.getCoupon({ id: "cpn_0000000000000000000000000" }, { headers: { "pf-client-ip": `198.51.100.${n}` } });
    const limit = getOption(CouponsService, rate_limits).find((declared) => declared.name === "lookup")!.anonymous!;
    for (let n = 0; n < limit.perMinute; n++) {
      const missing = await lookup(n).catch(refusal);
      expect(missing).toMatchObject({ code: Code.NotFound });
    }
    const over = await lookup(250).catch(refusal);
    expect(over).toMatchObject({ code: Code.ResourceExhausted });

    // A gateway of another process vouches for its client's address: that address is counted, not the peer's.
    const keys = t.platform.contexts.get("coupons")!.clientKeys;
    const vouched = (proof: string) =>
      coupons.getCoupon(
        { id: "cpn_0000000000000000000000000" },
        { headers: { "pf-client-ip": "192.0.2.44", "pf-client-ip-proof": proof } },
      );
    expect(await vouched(keys.proofOf("192.0.2.44")).catch(refusal)).toMatchObject({ code: Code.NotFound });
    expect(await vouched(keys.proofOf("192.0.2.45")).catch(refusal)).toMatchObject({ code: Code.ResourceExhausted });
  });

  it("is not needed for a limit: votes over RPC without it are counted per peer address", async () => {
    const deals = createClient(DealsService, overRpc());
    const offers = await Promise.all(
      Array.from({ length: 4 }, async () => (await submit(t, web, person())).offer.id as string),
    );
    const vote = (id: string) =>
      deals.setVote({ id, value: 1 }, { headers: { authorization: `Bearer ${web}`, "x-pf-subject": person() } });
    for (const id of offers.slice(0, 3)) expect((await vote(id)).vote?.value).toBe(1);
    const fourth = await vote(offers[3]).then(() => undefined, refusal);
    expect(fourth).toMatchObject({ code: Code.ResourceExhausted });
    expect(fourth?.message).toContain("deals.vote.ip");
  });
});
