import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { BillingService } from "../../gen/pf/billing/v1/billing_pb.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { flushTracing, startTracing, stopTracing } from "../../services/kit/runtime/tracing.js";
import type { Delivery } from "../../services/billing/provider/test.js";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";
import { NATS, describeWith } from "../support/skips.js";
import { TcpProxy } from "../support/tcp-proxy.js";
import { until } from "../support/until.js";
import { as, deliver, fund, newKey, person, setProfile, testProvider, usd, userToken } from "../tips/support.js";

/** Every span this process ends, and every log line its platforms write. */
const exporter = new InMemorySpanExporter();
const lines: Record<string, unknown>[] = [];
const logger = createLogger("info", { write: (line: string) => void lines.push(JSON.parse(line)) });

/** A W3C traceparent as a client would send it: a new trace id, the client's own span. */
function clientTraceparent(): { traceparent: string; traceId: string; spanId: string } {
  const [traceId, spanId] = [randomBytes(16).toString("hex"), randomBytes(8).toString("hex")];
  return { traceparent: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

const spansOf = (traceId: string) => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);

function named(spans: ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((s) => s.name === name);
  expect(
    found.map((s) => s.name),
    `${name} among ${spans.map((s) => s.name).join(", ")}`,
  ).toEqual([name]);
  return found[0];
}

const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

/** A supporter's tip by intent, paid at the test provider; answers the checkout. */
async function tipByIntent(front: TestPlatform, billing: TestPlatform, headers: Record<string, string>) {
  const [creator, supporter] = [person("cre"), person("sup")];
  await setProfile(front, creator);
  const tip = as(front, await userToken(front, supporter));
  const answer = await tip(
    "POST",
    "/checkout",
    { creator, amount: usd(700), payment_method: "PAYMENT_METHOD_INTENT" },
    { "idempotency-key": newKey(), ...headers },
  );
  expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
  const checkout = answer.body.checkout;
  const order = new URL(checkout.checkout_url as string).searchParams.get("order")!;
  const provider = testProvider(billing);
  await provider.approve(order);
  await provider.captureOrder(order);
  const captured = (await provider.deliveries(order)).find((d: Delivery) => d.type === "payment.captured")!;
  // The provider's webhook is a request of its own: it joins the trace when it carries the traceparent.
  const delivered = await deliver(front, captured, headers);
  expect(delivered.body.status).toBe("PROVIDER_EVENT_STATUS_APPLIED");
  await until(
    async () =>
      (await tip("GET", `/interactions/${checkout.id}`)).body.interaction.payment_state === "PAYMENT_STATE_SETTLED",
  );
  return { checkout, tip, creator };
}

/** The outbox row billing wrote when it settled this checkout's intent. */
async function settledRow(billing: TestPlatform, checkoutId: string) {
  const em = billing.platform.contexts.get("billing")!.orm.em.fork();
  const [row] = await em
    .getConnection()
    .execute<{ id: string; traceparent: string | null }[]>(
      `select id, traceparent from billing.outbox where subject = 'billing.intent.settled' and payload like ?`,
      [`%${checkoutId}%`],
    );
  return row;
}

// Billing in one process (RPC only), tips and the gateway in another reaching it over gRPC through a proxy the test
// can cut: one database, one NATS namespace, shared keys (docs/operations.md's split run).
describeWith(
  NATS,
  "tracing on: a tip by intent is one trace across the gateway, tips, billing and the consumer",
  () => {
    let billing: TestPlatform;
    let proxy: TcpProxy;
    let front: TestPlatform;

    beforeAll(async () => {
      startTracing(new SimpleSpanProcessor({ exporter }));
      const shared = {
        PF_JWT_PRIVATE_KEY: generateKeyPairSync("ed25519")
          .privateKey.export({ type: "pkcs8", format: "pem" })
          .toString(),
        PF_SEAL_KEY: "seal-key-of-the-tracing-test",
        PF_IP_HASH_KEY: "ip-hash-key-of-the-tracing-test",
      };
      billing = await startTestPlatform({ services: ["billing"], env: { ...shared, PF_GATEWAY: "0" }, logger });
      const rpc = new URL(billing.platform.rpcUrl);
      proxy = new TcpProxy(rpc.hostname, Number(rpc.port));
      await proxy.open();
      front = await startTestPlatform({
        services: ["tips"],
        logger,
        env: {
          ...shared,
          DATABASE_URL: billing.platform.databaseUrl,
          PF_NATS_NAMESPACE: billing.events!.namespace,
          PF_BILLING_URL: `http://127.0.0.1:${proxy.port}`,
          // Only billing's event settles the tip here, never tips' recovery worker.
          PF_TIPS_RECOVERY_EVERY_MS: "3600000",
          PF_TIPS_RECOVERY_AFTER_MS: "3600000",
        },
      });
    });
    afterAll(async () => {
      await front?.stop();
      await proxy?.cut();
      await billing?.stop();
      await stopTracing();
    });

    it("continues the client's traceparent through every RPC, its statements, the outbox row, the send to NATS and tips' consumer", async () => {
      const client = clientTraceparent();
      const { checkout } = await tipByIntent(front, billing, { traceparent: client.traceparent });
      await until(() => spansOf(client.traceId).some((s) => s.name === "tips/intent_settled"));
      const spans = spansOf(client.traceId);

      // The checkout: gateway → tips → billing, billing reached over gRPC.
      const gateway = named(spans, "POST /tips/api/v1/checkout");
      expect(gateway.kind).toBe(SpanKind.SERVER);
      expect(parentOf(gateway)).toBe(client.spanId);
      expect(gateway.attributes["http.response.status_code"]).toBeLessThan(300);
      const create = named(spans, "tips/CreateCheckout");
      expect(parentOf(create)).toBe(gateway.spanContext().spanId);
      expect(create.attributes).toMatchObject({ "rpc.system": "connect_rpc", "rpc.method": "CreateCheckout" });
      const intent = named(spans, "billing/CreateIntent");
      expect(parentOf(intent)).toBe(create.spanContext().spanId);
      // Each statement a call sends to PostgreSQL is a client span of that call (its SQL text never an attribute).
      const statements = spans.filter((s) => parentOf(s) === intent.spanContext().spanId && s.name.startsWith("pg "));
      expect(statements.length, spans.map((s) => s.name).join(", ")).toBeGreaterThan(0);
      for (const statement of statements) {
        expect(statement.kind).toBe(SpanKind.CLIENT);
        expect(statement.name).toMatch(/^pg [A-Z]+$/);
        expect(JSON.stringify(statement.attributes)).not.toMatch(/select |insert /i);
      }

      // The webhook that settles it: its RPC wrote the event, whose consumer in tips continues the trace.
      const webhook = named(spans, "billing/ReceiveProviderWebhook");
      expect(parentOf(webhook)).toBe(named(spans, "POST /billing/api/v1/webhooks/{provider}").spanContext().spanId);
      const row = await settledRow(billing, checkout.id);
      expect(row.traceparent).toBe(`00-${client.traceId}-${webhook.spanContext().spanId}-01`);
      // The relay's send of that event to NATS is a producer span of the same trace, under the call that wrote it.
      const sends = spans.filter((s) => s.name === "publish billing.intent.settled");
      expect(sends.length).toBeGreaterThan(0);
      expect(sends[0].kind).toBe(SpanKind.PRODUCER);
      expect(parentOf(sends[0])).toBe(webhook.spanContext().spanId);
      expect(sends[0].attributes).toMatchObject({ "messaging.system": "nats", "messaging.message.id": row.id });
      const consumer = named(spans, "tips/intent_settled");
      expect(consumer.kind).toBe(SpanKind.CONSUMER);
      expect(parentOf(consumer)).toBe(webhook.spanContext().spanId);
      expect(consumer.attributes).toMatchObject({
        "messaging.system": "nats",
        "messaging.destination.name": "billing.intent.settled",
        "messaging.message.id": row.id,
      });
      // What the consumer wrote carries its span on: tips' own overlay consumer is in the trace too.
      await until(() => spansOf(client.traceId).some((s) => s.name === "tips/overlay_alerts"));
      expect(parentOf(named(spansOf(client.traceId), "tips/overlay_alerts"))).toBe(consumer.spanContext().spanId);
    });

    it("gives each transfer of a batch its own trace: its event carries the span of the call that made it", async () => {
      const transfers = billing.client(
        BillingService,
        await billing.token({ kind: "service", svc: "tips", caps: ["billing.transfer.create"] }),
      );
      const creator = person("cre");
      const payers = Array.from({ length: 12 }, () => person("fan"));
      for (const payer of payers) await fund(billing, payer, 100n);
      const sent = payers.map((payer) => ({ payer, client: clientTraceparent() }));
      // All at once: the first starts a batch, the others queue behind it and share the next.
      const answers = await Promise.all(
        sent.map(({ payer, client }) =>
          transfers.createTransfer(
            {
              fromSubject: payer,
              toSubject: creator,
              amount: { minorUnits: 10n, currency: "USD" },
              idempotencyKey: newKey(),
            },
            { headers: { traceparent: client.traceparent } },
          ),
        ),
      );
      const ids = answers.map((answer) => answer.transfer!.id);
      const sql = <T>(query: string, params: unknown[]) =>
        billing.platform.contexts.get("billing")!.orm.em.fork().getConnection().execute<T[]>(query, params);
      const [commits] = await sql<{ n: string }>(
        `select count(distinct xmin::text) as n from billing.transactions where id in (${ids.map(() => "?").join(", ")})`,
        ids,
      );
      expect(Number(commits.n)).toBeLessThan(ids.length);

      for (const [i, { client }] of sent.entries()) {
        const call = named(spansOf(client.traceId), "billing/CreateTransfer");
        expect(parentOf(call)).toBe(client.spanId);
        const [row] = await sql<{ traceparent: string | null }>(
          `select traceparent from billing.outbox where subject = 'billing.transfer.created' and payload like ?`,
          [`%${ids[i]}%`],
        );
        expect(row.traceparent).toBe(`00-${client.traceId}-${call.spanContext().spanId}-01`);
      }
    });

    it("starts a trace at the gateway when the client sends none, and a refused call's span holds its Connect code", async () => {
      const supporter = person("sup");
      const missing = await as(front, await userToken(front, supporter))("GET", "/interactions/int_missing");
      expect(missing.status).toBe(404);
      const requestId = missing.headers.get("x-request-id");
      const gateway = exporter
        .getFinishedSpans()
        .find((s) => s.attributes["pf.request_id"] === requestId && s.attributes["http.route"])!;
      expect(gateway.name).toBe("GET /tips/api/v1/interactions/{id}");
      expect(gateway.parentSpanContext).toBeUndefined();
      expect(gateway.attributes["http.response.status_code"]).toBe(404);
      const rpc = named(spansOf(gateway.spanContext().traceId), "tips/GetInteraction");
      expect(rpc.attributes).toMatchObject({
        "rpc.connect_rpc.error_code": "not_found",
        "pf.problem.status": 404,
      });
    });

    it("writes the trace id on the log lines of a request", async () => {
      const client = clientTraceparent();
      const creator = person("cre");
      await setProfile(front, creator);
      const tip = as(front, await userToken(front, person("sup")));
      await proxy.cut();
      try {
        const pending = await tip(
          "POST",
          "/checkout",
          { creator, amount: usd(300), payment_method: "PAYMENT_METHOD_INTENT" },
          { "idempotency-key": newKey(), traceparent: client.traceparent },
        );
        expect(pending.body.checkout?.payment_state, JSON.stringify(pending.body)).toBe("PAYMENT_STATE_PENDING");
      } finally {
        await proxy.open();
      }
      const create = named(spansOf(client.traceId), "tips/CreateCheckout");
      const logged = lines.find((line) => line.msg === "billing did not answer; the checkout stays pending");
      expect(logged).toMatchObject({
        service: "tips",
        trace_id: client.traceId,
        span_id: create.spanContext().spanId,
        requestId: create.attributes["pf.request_id"],
      });
    });
  },
);

describeWith(NATS, "tracing off", () => {
  let t: TestPlatform;
  beforeAll(async () => {
    await stopTracing();
    exporter.reset();
    lines.length = 0;
    t = await startTestPlatform({
      services: ["tips", "billing"],
      logger,
      env: { PF_TIPS_RECOVERY_EVERY_MS: "3600000", PF_TIPS_RECOVERY_AFTER_MS: "3600000" },
    });
  });
  afterAll(() => t?.stop());

  it("needs no traceparent, takes one without tracing it, and records none in the outbox", async () => {
    const { checkout } = await tipByIntent(t, t, {});
    expect((await settledRow(t, checkout.id)).traceparent).toBeNull();
    const sent = await tipByIntent(t, t, { traceparent: clientTraceparent().traceparent });
    expect((await settledRow(t, sent.checkout.id)).traceparent).toBeNull();
    expect(exporter.getFinishedSpans()).toEqual([]);
    expect(lines.filter((line) => "trace_id" in line)).toEqual([]);
  });
});

/** The spans of an OTLP/HTTP JSON export, as a collector receives them. */
interface OtlpExport {
  resourceSpans: {
    resource: { attributes: { key: string; value: { stringValue?: string } }[] };
    scopeSpans: { spans: { traceId: string; spanId: string; parentSpanId?: string; name: string }[] }[];
  }[];
}

describeWith(NATS, "tracing on by OTEL_EXPORTER_OTLP_ENDPOINT", () => {
  /** What a collector at the endpoint received at /v1/traces. */
  const exports: { contentType?: string; body: OtlpExport }[] = [];
  let collector: Server;
  let t: TestPlatform;

  beforeAll(async () => {
    await stopTracing();
    collector = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        if (request.method === "POST" && request.url === "/v1/traces")
          exports.push({
            contentType: request.headers["content-type"],
            body: JSON.parse(Buffer.concat(chunks).toString()) as OtlpExport,
          });
        response.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve));
    vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", `http://127.0.0.1:${(collector.address() as AddressInfo).port}`);
    vi.stubEnv("OTEL_SERVICE_NAME", "pf-tracing-test");
    // Tips and billing in one process: tips calls billing in memory.
    t = await startTestPlatform({
      services: ["tips", "billing"],
      env: { PF_TIPS_RECOVERY_EVERY_MS: "3600000", PF_TIPS_RECOVERY_AFTER_MS: "3600000" },
    });
  });
  afterAll(async () => {
    await t?.stop();
    await stopTracing();
    vi.unstubAllEnvs();
    await new Promise((resolve) => collector?.close(resolve));
  });

  it("exports a tip by intent as one trace, the in-memory call from tips to billing included", async () => {
    const client = clientTraceparent();
    await tipByIntent(t, t, { traceparent: client.traceparent });
    const exported = () =>
      exports.flatMap(({ body }) =>
        body.resourceSpans.flatMap(({ scopeSpans }) =>
          scopeSpans.flatMap(({ spans }) => spans.filter((span) => span.traceId === client.traceId)),
        ),
      );
    const one = (name: string) => {
      const found = exported().filter((span) => span.name === name);
      expect(found, name).toHaveLength(1);
      return found[0];
    };
    await until(async () => {
      await flushTracing();
      return exported().some((span) => span.name === "tips/intent_settled");
    });

    expect(exports.every(({ contentType }) => contentType === "application/json")).toBe(true);
    const names = exports.flatMap(({ body }) =>
      body.resourceSpans.flatMap(({ resource }) =>
        resource.attributes.filter(({ key }) => key === "service.name").map(({ value }) => value.stringValue),
      ),
    );
    expect(new Set(names)).toEqual(new Set(["pf-tracing-test"]));

    const gateway = one("POST /tips/api/v1/checkout");
    expect(gateway.parentSpanId).toBe(client.spanId);
    const create = one("tips/CreateCheckout");
    expect(create.parentSpanId).toBe(gateway.spanId);
    expect(one("billing/CreateIntent").parentSpanId).toBe(create.spanId);
    expect(one("tips/intent_settled").parentSpanId).toBe(one("billing/ReceiveProviderWebhook").spanId);
  });
});
