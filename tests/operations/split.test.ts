import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { as, balanceReader, fund, newKey, person, setProfile, usd, userToken } from "../tips/support.js";

// docs/operations.md's split run: billing in one process (RPC only), tips and vip in another with the one
// gateway in front; one database, one NATS namespace, shared keys.
let billing: TestPlatform;
let front: TestPlatform;

beforeAll(async () => {
  const shared = {
    PF_JWT_PRIVATE_KEY: generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
    PF_SEAL_KEY: "seal-key-of-the-split-test",
    PF_IP_HASH_KEY: "ip-hash-key-of-the-split-test",
  };
  billing = await startTestPlatform({ services: ["billing"], env: { ...shared, PF_GATEWAY: "0" } });
  front = await startTestPlatform({
    services: ["tips", "vip"],
    env: {
      ...shared,
      DATABASE_URL: billing.platform.databaseUrl,
      ...(billing.events ? { PF_NATS_NAMESPACE: billing.events.namespace } : {}),
      PF_BILLING_URL: billing.platform.rpcUrl,
    },
  });
});
afterAll(async () => {
  await front?.stop();
  await billing?.stop();
});

describe("a split platform behind one gateway", () => {
  it("serves billing's routes from the other process, and a tip there charges billing once", async () => {
    expect(billing.platform.gatewayUrl).toBeUndefined();
    const [creator, supporter] = [person("cre"), person("sup")];
    await fund(billing, supporter, 1000n);
    const balances = await balanceReader(front);
    expect((await balances(supporter))[0]).toMatchObject({ spendable_credit: "1000" });

    await setProfile(front, creator);
    const tip = as(front, await userToken(front, supporter));
    const key = newKey();
    const paid = await tip("POST", "/checkout", { creator, amount: usd(250) }, { "idempotency-key": key });
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    const again = await tip("POST", "/checkout", { creator, amount: usd(250) }, { "idempotency-key": key });
    expect(again.body.checkout.id).toBe(paid.body.checkout.id);
    expect((await balances(supporter))[0]).toMatchObject({ spendable_credit: "750" });
  });

  it("refuses a caller the remote route does not admit before the call leaves the gateway", async () => {
    const refused = await front.http("GET", `/billing/api/v1/balances/${person("x")}`);
    expect(refused.status).toBe(401);
    const user = await front.token({ kind: "user", sub: person("u") });
    expect((await front.http("GET", "/billing/api/v1/admin/freeze", { token: user })).status).toBe(403);
  });

  it("routes no service that neither process runs", async () => {
    const token = await front.token({ kind: "service", svc: "ops", caps: ["deals.offer.read"] });
    expect((await front.http("GET", "/deals/api/v1/offers", { token })).status).toBe(404);
  });
});
