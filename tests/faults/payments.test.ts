import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { generateKeyPairSync } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TipsService } from "../../gen/pf/tips/v1/tips_pb.js";
import { PaymentState } from "../../gen/pf/tips/v1/interactions_pb.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { until } from "../support/until.js";
import { as, balanceReader, fund, newKey, person, setProfile, usd, userToken } from "../tips/support.js";

// Tips reaches billing over gRPC through a proxy the test controls: billing's answer can be lost after it committed.
let billing: TestPlatform;
let proxy: TcpProxy;
let t: TestPlatform;
let balances: Awaited<ReturnType<typeof balanceReader>>;

beforeAll(async () => {
  const key = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const shared = { NATS_URL: "", PF_JWT_PRIVATE_KEY: key };
  billing = await startTestPlatform({ services: ["billing"], env: shared });
  const rpc = new URL(billing.platform.rpcUrl);
  proxy = new TcpProxy(rpc.hostname, Number(rpc.port));
  await proxy.open();
  t = await startTestPlatform({
    services: ["tips"],
    // Short deadlines, so that a billing that never answers is waited out quickly.
    env: { ...shared, PF_BILLING_URL: `http://127.0.0.1:${proxy.port}`, PF_CALL_TIMEOUT_MS: "2000" },
  });
  balances = await balanceReader(billing);
});
afterAll(async () => {
  await t?.stop();
  await proxy?.cut();
  await billing?.stop();
});

/** A creator accepting tips and a supporter with 1000 USD minor units of credit, who tipped once through a healthy link. */
async function scene() {
  const [creator, supporter] = [person("cre"), person("sup")];
  await setProfile(t, creator);
  await fund(billing, supporter, 1000n);
  const tip = as(t, await userToken(t, supporter));
  const warm = await tip("POST", "/checkout", { creator, amount: usd(100) }, { "idempotency-key": newKey() });
  expect(warm.status).toBe(201);
  return { creator, supporter, tip };
}

const spendable = async (subject: string) => (await balances(subject))[0]?.spendable_credit;

describe("a tip whose billing call is not answered", () => {
  it("answers 202 pending (never a decline) when the connection resets after billing committed; the same key settles it, charged once", async () => {
    const { creator, supporter, tip } = await scene();
    const key = newKey();
    const body = { creator, amount: usd(300) };
    proxy.holdAnswers = true;
    const answering = tip("POST", "/checkout", body, { "idempotency-key": key });
    // Billing received the transfer and committed it; its answer never reaches tips.
    await until(async () => (await spendable(supporter)) === "600");
    proxy.reset();
    const first = await answering;
    proxy.holdAnswers = false;
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect(first.body.checkout).toMatchObject({ payment_state: "PAYMENT_STATE_PENDING" });
    expect(first.body.detail).toMatch(/same Idempotency-Key/);

    const again = await tip("POST", "/checkout", body, { "idempotency-key": key });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body.checkout).toMatchObject({ id: first.body.checkout.id, payment_state: "PAYMENT_STATE_SETTLED" });
    expect(again.body.interaction).toMatchObject({
      id: first.body.checkout.id,
      payment_state: "PAYMENT_STATE_SETTLED",
    });
    expect(again.body.detail).toBe("");
    expect(await spendable(supporter)).toBe("600");
    expect((await balances(creator))[0]?.creator_payable).toBe("400");
  });

  it("answers 202 pending while billing is unreachable, and settles on a retry once it is back", async () => {
    const { creator, supporter, tip } = await scene();
    const key = newKey();
    const body = { creator, amount: usd(250) };
    await proxy.cut();
    try {
      const first = await tip("POST", "/checkout", body, { "idempotency-key": key });
      expect(first.status, JSON.stringify(first.body)).toBe(202);
      expect(first.body.checkout).toMatchObject({ payment_state: "PAYMENT_STATE_PENDING" });
    } finally {
      await proxy.open();
    }
    const again = await tip("POST", "/checkout", body, { "idempotency-key": key });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(again.body.checkout.payment_state).toBe("PAYMENT_STATE_SETTLED");
    expect(await spendable(supporter)).toBe("650");
  });

  it("answers 202 pending, not 504, when billing does not answer within the tip's own deadline", async () => {
    const { creator, supporter, tip } = await scene();
    const key = newKey();
    const body = { creator, amount: usd(200) };
    proxy.holdAnswers = true;
    let first;
    try {
      first = await tip("POST", "/checkout", body, { "idempotency-key": key });
    } finally {
      proxy.holdAnswers = false;
      proxy.reset();
    }
    expect(first.status, JSON.stringify(first.body)).toBe(202);
    expect(first.body.checkout).toMatchObject({ payment_state: "PAYMENT_STATE_PENDING" });
    const again = await tip("POST", "/checkout", body, { "idempotency-key": key });
    expect(again.status, JSON.stringify(again.body)).toBe(201);
    expect(await spendable(supporter)).toBe("700");
  });

  it("answers a caller whose deadline is the platform's own in time: billing's call ends first, pending", async () => {
    const { creator, supporter } = await scene();
    const tips = createClient(TipsService, createGrpcTransport({ baseUrl: t.platform.rpcUrl }));
    const headers = { authorization: `Bearer ${await userToken(t, supporter)}`, "idempotency-key": newKey() };
    const request = { creator, amount: { currency: "USD", minorUnits: 100n } };
    proxy.holdAnswers = true;
    let first;
    try {
      // The same 2 s the platform gives its own calls: tips keeps time back to answer before it runs out.
      first = await tips.createCheckout(request, { headers, timeoutMs: 2_000 });
    } finally {
      proxy.holdAnswers = false;
      proxy.reset();
    }
    expect(first.checkout?.paymentState).toBe(PaymentState.PENDING);
    const again = await tips.createCheckout(request, { headers, timeoutMs: 2_000 });
    expect(again.checkout?.paymentState).toBe(PaymentState.SETTLED);
    expect(await spendable(supporter)).toBe("800");
  });
});
