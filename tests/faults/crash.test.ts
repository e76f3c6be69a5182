import { jetstream } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runChecks } from "../../services/billing/db/reconciliation.js";
import { startChildPlatform, type ChildPlatform } from "../support/child-platform.js";
import { freePorts } from "../support/ports.js";
import { startTestPlatform, type HttpAnswer, type TestPlatform } from "../support/platform.js";
import { describeWith, need } from "../support/skips.js";
import { until } from "../support/until.js";
import { balanceReader, fund, person, usd } from "../tips/support.js";

const TIPS = 160;
const SUPPORTERS = 16;
const FUNDS = 10_000n;
const AMOUNT = 100;
/** Answers before the kill: the rest of the burst is in flight or not sent yet. */
const KILL_AFTER = 50;

// Billing and tips with the gateway in a process of their own, killed with SIGKILL while a burst of keyed tips is
// in flight, then started again on the same database and NATS namespace. A second billing instance in the test's
// process (`observer`) shares the database: it funds the supporters and reads the ledger afterwards.
const SERVERS = need(
  Boolean(process.env.DATABASE_URL && process.env.NATS_URL),
  "a child process shares the database and NATS: DATABASE_URL and NATS_URL",
);

describeWith(SERVERS, "a process killed mid-burst and started again", () => {
  let observer: TestPlatform;
  let child: ChildPlatform | undefined;
  let env: Record<string, string>;

  beforeAll(async () => {
    const key = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const shared = { PF_JWT_PRIVATE_KEY: key, PF_SEAL_KEY: "crash-test-seal", PF_IP_HASH_KEY: "crash-test-ip" };
    observer = await startTestPlatform({ services: ["billing"], env: shared });
    env = {
      ...shared,
      DATABASE_URL: observer.platform.databaseUrl,
      NATS_URL: process.env.NATS_URL!,
      PF_NATS_NAMESPACE: observer.events!.namespace,
      PF_SERVICES: "billing,tips",
      PF_HTTP_PORT: String((await freePorts(1))[0]),
      PF_RPC_PORT: "0",
      PF_DATA_DIR: await mkdtemp(join(tmpdir(), "pf-crash-")),
      PF_TIPS_RECOVERY_EVERY_MS: "300",
      PF_TIPS_RECOVERY_AFTER_MS: "300",
    };
  }, 60_000);
  afterAll(async () => {
    await child?.stop();
    await observer?.stop();
    if (env?.PF_DATA_DIR) await rm(env.PF_DATA_DIR, { recursive: true, force: true });
  });

  it("applies every key once, charges no supporter for a tip that does not exist, and publishes every event once", async () => {
    const supporters = Array.from({ length: SUPPORTERS }, () => person("sup"));
    const creator = person("cre");
    for (const supporter of supporters) await fund(observer, supporter, FUNDS);
    const tokens = new Map<string, string>();
    for (const subject of [creator, ...supporters])
      tokens.set(subject, await observer.token({ kind: "user", sub: subject }));

    child = await startChildPlatform(env);
    const call = (method: string, path: string, subject: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${child!.gatewayUrl}/tips/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${tokens.get(subject)!}`, "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      }).then(async (answer): Promise<HttpAnswer> => ({
        status: answer.status,
        headers: answer.headers,
        body: await answer.json(),
      }));
    const profile = await call("PATCH", `/profiles/${creator}`, creator, { page_enabled: true, accepting: true });
    expect(profile.status, JSON.stringify(profile.body)).toBe(200);

    const tips = Array.from({ length: TIPS }, (_, i) => ({ supporter: supporters[i % SUPPORTERS], key: `crash-${i}` }));
    const tip = ({ supporter, key }: (typeof tips)[number]) =>
      call("POST", "/checkout", supporter, { creator, amount: usd(AMOUNT) }, { "idempotency-key": key });

    // The burst: 16 at a time; the process is killed once KILL_AFTER have answered.
    const before = new Map<string, string>();
    let answered = 0;
    let lost = 0;
    let killed: Promise<void> | undefined;
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < tips.length && !killed) {
          const one = tips[next++];
          const answer = await tip(one).catch(() => void lost++);
          if (answer?.body?.checkout?.id) before.set(one.key, answer.body.checkout.id);
          if (++answered === KILL_AFTER) killed = child!.kill();
        }
      }),
    );
    await killed;
    // Killed mid-burst: some answered before, some were cut off in flight.
    expect(before.size).toBeGreaterThan(0);
    expect(lost).toBeGreaterThan(0);

    child = await startChildPlatform(env);

    // Every key again, the same request: each resolves to one settled checkout, the one it named before the crash.
    const after = new Map<string, string>();
    const queue = [...tips];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (let one = queue.pop(); one; one = queue.pop()) {
          const again = one;
          await until(async () => {
            const answer = await tip(again);
            expect([201, 202]).toContain(answer.status);
            after.set(again.key, answer.body.checkout.id);
            return answer.status === 201;
          }, 20_000);
        }
      }),
    );
    for (const [key, id] of before) expect(after.get(key)).toBe(id);
    expect(new Set(after.values()).size).toBe(TIPS);

    // The ledger: exactly one transfer per tip, each supporter charged for its own tips only, and balanced.
    const billing = observer.platform.contexts.get("billing")!;
    const connection = billing.orm.em.getConnection();
    const transfers = await connection.execute<{ reference_id: string; count: string }[]>(
      `select reference_id, count(*) as count from billing.transactions where reference_id like 'int\\_%' group by reference_id`,
    );
    expect(transfers.map((row) => row.count).filter((count) => count !== "1")).toEqual([]);
    expect(new Set(transfers.map((row) => row.reference_id))).toEqual(new Set(after.values()));
    const balances = await balanceReader(observer);
    for (const supporter of supporters) {
      const own = tips.filter((one) => one.supporter === supporter).length;
      expect((await balances(supporter))[0]?.spendable_credit).toBe(String(FUNDS - BigInt(own * AMOUNT)));
    }
    expect((await balances(creator))[0]?.creator_payable).toBe(String(TIPS * AMOUNT));
    const { findings } = await billing.orm.em.fork().transactional((em) => runChecks(em));
    expect(findings).toEqual([]);

    // The streams: once both outboxes are sent, each holds every committed event exactly once.
    for (const service of ["tips", "billing"]) {
      await until(async () => {
        const [unsent] = await connection.execute<{ count: string }[]>(
          `select count(*) as count from ${service}.outbox where sent_at is null`,
        );
        return unsent.count === "0";
      }, 15_000);
      const committed = (await connection.execute<{ id: string }[]>(`select id from ${service}.outbox`)).map(
        (row) => row.id,
      );
      const published = await messageIds(observer.events!.stream(service), committed.length);
      expect(published.length).toBe(committed.length);
      expect(new Set(published)).toEqual(new Set(committed));
    }
  }, 290_000); // two starts of the child (CHILD_START_MS each) and the bursts
});

/** The Nats-Msg-Id of every message in a stream, read with an ordered consumer. */
async function messageIds(stream: string, expected: number): Promise<string[]> {
  const nc = await connect({ servers: process.env.NATS_URL });
  try {
    const consumer = await jetstream(nc).consumers.get(stream);
    const ids: string[] = [];
    const messages = await consumer.fetch({ max_messages: expected + 100, expires: 2_000 });
    for await (const message of messages) ids.push(message.headers?.get("Nats-Msg-Id") ?? "");
    return ids;
  } finally {
    await nc.close();
  }
}
