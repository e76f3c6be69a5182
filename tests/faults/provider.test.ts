import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { createTestDatabase, serverUrl } from "../support/database.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { DATABASE_SERVER, describeWith, itWith } from "../support/skips.js";
import { deliver, purchases, testProvider } from "../billing/payments.js";

/**
 * Billing instances on one database (and one data directory: the same keys)
 * share the test-mode provider's orders: another instance, or the same one
 * started again, knows an order it did not open.
 */
describeWith(DATABASE_SERVER, "the test-mode provider's orders", () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let dataDir: string;
  const running: TestPlatform[] = [];

  const start = async (env: Record<string, string> = {}) => {
    const platform = await startTestPlatform({
      services: ["billing"],
      env: { DATABASE_URL: database.url, PF_DATA_DIR: dataDir, ...env },
    });
    running.push(platform);
    return platform;
  };
  const stop = async (platform: TestPlatform) => {
    running.splice(running.indexOf(platform), 1);
    await platform.stop();
  };

  /** Opens an intent (and its order) through one instance, and settles it through another. */
  async function settleElsewhere(opener: TestPlatform, settler: TestPlatform): Promise<void> {
    const tips = await opener.token({ kind: "service", svc: "tips", caps: ["billing.intent.create"] });
    const { id, order } = await purchases(opener, { token: () => tips, reader: () => tips }).newIntent();
    const provider = testProvider(settler);
    expect((await deliver(settler, await provider.approve(order))).body).toMatchObject({
      status: "PROVIDER_EVENT_STATUS_APPLIED",
    });
    const captured = await settler.http("POST", `/billing/api/v1/intents/${id}/capture`, { token: tips, body: {} });
    expect(captured.body.intent).toMatchObject({ id, status: "INTENT_STATUS_SETTLED" });
    const deliveries = await provider.deliveries(order);
    expect(deliveries.map((d) => d.type)).toEqual(["order.approved", "payment.captured"]);
  }

  beforeAll(async () => {
    database = await createTestDatabase(serverUrl()!);
    dataDir = await mkdtemp(join(tmpdir(), "pf-provider-"));
  });
  afterAll(async () => {
    await Promise.all(running.map((platform) => platform.stop()));
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  itWith(DATABASE_SERVER, "opened on one instance are known to another", async () => {
    const [one, two] = await Promise.all([start(), start()]);
    await settleElsewhere(one, two);
    await settleElsewhere(two, one);
  });

  itWith(DATABASE_SERVER, "are known after a restart", async () => {
    const before = running[0]!;
    const tips = await before.token({ kind: "service", svc: "tips", caps: ["billing.intent.create"] });
    const { order } = await purchases(before, { token: () => tips, reader: () => tips }).newIntent();
    for (const platform of [...running]) await stop(platform);
    const after = await start();
    const approval = await testProvider(after).approve(order);
    expect((await deliver(after, approval)).body).toMatchObject({ status: "PROVIDER_EVENT_STATUS_APPLIED" });
  });

  itWith(DATABASE_SERVER, "are approved in auto mode even when the instance that opened them stops first", async () => {
    const auto = { PF_BILLING_TEST_PROVIDER_AUTO: "approve" };
    for (const platform of [...running]) await stop(platform);
    const opener = await start(auto);
    const tips = await opener.token({ kind: "service", svc: "tips", caps: ["billing.intent.create"] });
    const { id } = await purchases(opener, { token: () => tips, reader: () => tips }).newIntent();
    // Gone before its approval was due (half a second after the order opened).
    await stop(opener);
    const after = await start(auto);
    await expect
      .poll(
        async () => (await after.http("GET", `/billing/api/v1/intents/${id}`, { token: tips })).body.intent.status,
        { timeout: 8000, interval: 100 },
      )
      .toBe("INTENT_STATUS_APPROVED");
  });
});
