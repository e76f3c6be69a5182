import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signDelivery } from "../../services/billing/provider/standard-webhooks.js";
import { loadConfig, PRODUCTION_SETTINGS } from "../../services/kit/runtime/config.js";
import { deliver, installationSecret, packPurchase, purchases, testProvider } from "../billing/payments.js";
import { person } from "../billing/support.js";
import { startTestPlatform, usePlatform, type TestPlatform } from "../support/platform.js";
import { itWith, need } from "../support/skips.js";

// Issue 11, High 1: the test provider's secret was this constant from the source, and the provider was on by default.
const SOURCE_SECRET = "whsec_pf_test_mode_only";

/** A provider event for `order`, signed with `secret` (any payment.captured a forger would send). */
const signed = (secret: Parameters<typeof signDelivery>[0], order: string, type = "payment.captured") => {
  const id = `tevt_forged${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
  const body = JSON.stringify({ id, type, created_at: new Date().toISOString(), data: { order_id: order } });
  return { body, headers: { ...signDelivery(secret, id, Buffer.from(body), new Date()) } };
};
const webhook = (t: TestPlatform, delivery: { body: string; headers: Record<string, string> }) =>
  t.http("POST", "/billing/api/v1/webhooks/test", delivery);

const t = usePlatform({ services: ["billing"] });

const servers = need(
  Boolean(process.env.DATABASE_URL && process.env.NATS_URL),
  "DATABASE_URL or NATS_URL is unset: production takes neither the embedded database nor the in-process bus",
);

/** Every setting production must give, with values fit for a test. */
const productionSettings: Record<string, string> = {
  DATABASE_URL: "postgres://db.invalid:5432/pf",
  NATS_URL: "nats://nats.invalid:4222",
  PF_JWT_PRIVATE_KEY: generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  PF_SEAL_KEY: "seal-key-of-this-test",
  PF_IP_HASH_KEY: "ip-hash-key-of-this-test",
};
let tips: string;
let reader: string;

beforeAll(async () => {
  tips = await t.token({ kind: "service", svc: "tips", caps: ["billing.intent.create"] });
  reader = await t.token({ kind: "service", svc: "tips", caps: ["billing.balance.read"] });
});

const { newIntent, statusOf, creditOf } = purchases(t, { token: () => tips, reader: () => reader });

describe("the test provider's webhook secret, where none is configured", () => {
  it("is made for this installation under <data>/keys/, readable by its owner only", async () => {
    const file = join(t.platform.contexts.get("billing")!.config.dataDir, "keys", "billing-test-provider.key");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readFile(file, "utf8")).length).toBeGreaterThanOrEqual(40);
  });

  it("refuses an anonymous payment.captured signed with the secret the source used to hold (401)", async () => {
    const { id, order, buyer } = await newIntent();
    const answer = await webhook(t, signed(SOURCE_SECRET, order));
    expect(answer.status).toBe(401);
    expect(answer.body.code).toBe("webhook.signature_invalid");
    expect(await statusOf(id)).toBe("INTENT_STATUS_REQUIRES_ACTION");
    expect(await creditOf(buyer)).toBe("0");
  });

  it("applies a delivery signed with the installation's secret", async () => {
    const { id, order, buyer } = await newIntent();
    const answer = await webhook(t, signed(await installationSecret(t), order));
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe("PROVIDER_EVENT_STATUS_APPLIED");
    expect(await statusOf(id)).toBe("INTENT_STATUS_SETTLED");
    expect(await creditOf(buyer)).toBe("500");
  });

  describe("across restarts", () => {
    let dataDir: string;
    beforeAll(async () => {
      dataDir = await mkdtemp(join(tmpdir(), "pf-secret-"));
    });
    afterAll(() => rm(dataDir, { recursive: true, force: true }));

    it("stays the same in the same data dir, and differs from another installation's", async () => {
      const first = await startTestPlatform({ services: ["billing"], env: { PF_DATA_DIR: dataDir } });
      let delivery;
      try {
        const provider = testProvider(first);
        const { orderId } = await provider.createOrder({ currency: "USD", price: 100n, requestId: "restart" });
        delivery = await provider.approve(orderId);
      } finally {
        await first.stop();
      }
      const second = await startTestPlatform({ services: ["billing"], env: { PF_DATA_DIR: dataDir } });
      try {
        // Signed by the first run: the second verifies it (its order is unknown here, so it is ignored).
        const again = await deliver(second, delivery);
        expect(again.status).toBe(200);
        expect(again.body.status).toBe("PROVIDER_EVENT_STATUS_IGNORED");
      } finally {
        await second.stop();
      }
      expect((await deliver(t, delivery)).status).toBe(401);
    });
  });
});

describe("choosing the test provider", () => {
  it("without a choice, it is not there: its webhook answers 404 provider.unknown and intents find no provider", async () => {
    const off = await startTestPlatform({ services: ["billing"], env: { PF_BILLING_TEST_PROVIDER: "" } });
    try {
      const answer = await webhook(off, signed(SOURCE_SECRET, "tord_any"));
      expect(answer.body).toMatchObject({ status: 404, code: "provider.unknown" });
      expect(answer.body.detail).toContain("not enabled");
      const token = await off.token({ kind: "service", svc: "tips", caps: ["billing.intent.create"] });
      const intent = await off.http("POST", "/billing/api/v1/intents", { token, body: packPurchase(person()) });
      expect(intent.body).toMatchObject({ status: 404, code: "provider.unknown" });
    } finally {
      await off.stop();
    }
  });

  // The test platform gives the database and NATS of the machine; the keys are given here.
  itWith(servers, "refuses to start in production (PF_ENV=production) with test-mode payments", async () => {
    const { DATABASE_URL: _database, NATS_URL: _nats, ...keys } = productionSettings;
    await expect(startTestPlatform({ services: ["billing"], env: { ...keys, PF_ENV: "production" } })).rejects.toThrow(
      /PF_BILLING_TEST_PROVIDER=on is refused with PF_ENV=production/,
    );
  });

  it("refuses an environment name it does not know rather than run it as development", () => {
    expect(() => loadConfig({ PF_ENV: "prod" })).toThrow(/PF_ENV/);
    expect(loadConfig({ ...productionSettings, PF_ENV: "production" }).production).toBe(true);
    expect(loadConfig({}).production).toBe(false);
  });

  it("refuses production without each setting it must not make up for itself", () => {
    for (const name of PRODUCTION_SETTINGS) {
      const { [name]: _left, ...rest } = productionSettings;
      expect(() => loadConfig({ ...rest, PF_ENV: "production" })).toThrow(new RegExp(`needs ${name} set`));
    }
  });
});
