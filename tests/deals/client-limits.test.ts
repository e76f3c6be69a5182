import { beforeAll, describe, expect, it } from "vitest";
import { DealsService } from "../../gen/pf/deals/v1/deals_pb.js";
import { clientWithDefaults } from "../../services/kit/rpc/clients.js";
import { usePlatform } from "../support/platform.js";
import { actingFor, ALL_DEALS, person, submit } from "./support.js";

// Only the per-address vote limit is tight here.
const t = usePlatform({ services: ["deals"], env: { PF_DEALS_VOTES_PER_IP_MINUTE: "3" } });
let web: string;
let as: ReturnType<typeof actingFor>;

beforeAll(async () => {
  web = await t.token({ kind: "service", svc: "web", caps: ALL_DEALS });
  as = actingFor(t, () => web);
});

describe("votes per client address", () => {
  it("count every vote through the gateway from one address, whoever votes on whichever offer (429 deals.vote.ip)", async () => {
    const offers = await Promise.all(
      Array.from({ length: 4 }, async () => (await submit(t, web, person())).offer.id as string),
    );
    for (const id of offers.slice(0, 3))
      expect((await as("PUT", `/offers/${id}/vote`, person(), { value: 1 })).status).toBe(200);
    const fourth = await as("PUT", `/offers/${offers[3]}/vote`, person(), { value: 1 });
    expect(fourth.status).toBe(429);
    expect(fourth.body).toMatchObject({ code: "rate.limited", rule: "deals.vote.ip" });
    expect(Number(fourth.headers.get("retry-after"))).toBeGreaterThan(0);

    // A service calling over RPC has no client address: only the other limits apply.
    const direct = clientWithDefaults(DealsService, t.platform.transport, {
      headers: { authorization: `Bearer ${web}`, "x-pf-subject": person() },
    });
    const answer = await direct.setVote({ id: offers[3], value: 1 });
    expect(answer.vote?.value).toBe(1);
  });
});

describe("one link submitted by several people at once", () => {
  it("makes one offer; every other submit answers 409 offer.duplicate carrying it", async () => {
    const link = `https://shop.example/race/${Date.now()}`;
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => as("POST", "/offers", person(), { link, title: "Race" })),
    );
    const created = answers.filter((a) => a.status === 201);
    expect(created).toHaveLength(1);
    const duplicates = answers.filter((a) => a.status === 409);
    expect(duplicates).toHaveLength(5);
    for (const duplicate of duplicates) {
      expect(duplicate.body).toMatchObject({ code: "offer.duplicate" });
      expect(duplicate.body.offer.id).toBe(created[0].body.offer.id);
    }
  });
});
