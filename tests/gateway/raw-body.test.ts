import { create, createRegistry } from "@bufbuild/protobuf";
import { createRouterTransport } from "@connectrpc/connect";
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { BODY_HOOKS } from "../../gateway/bodies.js";
import { bindingsOf } from "../../gateway/bindings.js";
import { registerBindings } from "../../gateway/routes.js";
import { BillingService } from "../../gen/pf/billing/v1/billing_pb.js";
import { IntentResultSchema, ProviderWebhookResultSchema } from "../../gen/pf/billing/v1/intents_pb.js";
import { createLogger } from "../../services/kit/runtime/logger.js";
import { admitEveryone } from "./support.js";

/** Billing's webhook and intent bindings over a transport whose handlers echo what reached them. */
async function gateway() {
  const app = Fastify();
  const transport = createRouterTransport((router) =>
    router.service(BillingService, {
      receiveProviderWebhook: (request, call) => {
        const signed = ["webhook-id", "webhook-signature"].map((name) => call.requestHeader.get(name) ?? "");
        const eventId = [request.provider, ...signed, Buffer.from(request.payload).toString("hex")].join("|");
        return create(ProviderWebhookResultSchema, { eventId });
      },
      createIntent: () => create(IntentResultSchema, {}),
    }),
  );
  const bindings = bindingsOf(BillingService).filter((b) =>
    ["ReceiveProviderWebhook", "CreateIntent"].includes(b.method.name),
  );
  const logger = createLogger("silent");
  const context = { transport, admission: admitEveryone, timeoutMs: 1000, registry: createRegistry(), logger };
  registerBindings(app, bindings, {}, context);
  return app;
}

describe("the raw-bytes body hook", () => {
  it("claims bindings whose body is one bytes field, and no others", () => {
    const claimed = (name: string) =>
      BODY_HOOKS.filter((hook) => hook.claims(bindingsOf(BillingService).find((b) => b.method.name === name)!)).map(
        (hook) => hook.name,
      );
    expect(claimed("ReceiveProviderWebhook")).toEqual(["raw-bytes-body"]);
    expect(claimed("CreateIntent")).toEqual([]);
  });

  it("passes the exact body bytes, whatever the content type, and the signature headers", async () => {
    const app = await gateway();
    const bytes = Buffer.from([0x7b, 0x00, 0xff, 0x0a, 0x7d]);
    for (const contentType of [
      "application/json",
      "text/plain; charset=utf-8",
      "application/octet-stream",
      undefined,
    ]) {
      const response = await app.inject({
        method: "POST",
        url: "/billing/api/v1/webhooks/test",
        payload: bytes,
        headers: {
          ...(contentType && { "content-type": contentType }),
          "webhook-id": "msg_1",
          "webhook-signature": "v1,abc",
        },
      });
      expect(response.statusCode, contentType).toBe(200);
      expect(response.json().event_id).toBe(`test|msg_1|v1,abc|${bytes.toString("hex")}`);
    }
    await app.close();
  });

  it("keeps its parser off the other routes (415 for bytes sent to a JSON route)", async () => {
    const app = await gateway();
    const response = await app.inject({
      method: "POST",
      url: "/billing/api/v1/intents",
      payload: "x",
      headers: { "content-type": "application/octet-stream" },
    });
    expect(response.statusCode).toBe(415);
    await app.close();
  });
});
