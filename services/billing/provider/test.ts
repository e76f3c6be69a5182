import { createHmac, timingSafeEqual, type BinaryLike } from "node:crypto";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { Clock } from "../../kit/runtime/clock.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import type {
  CaptureOutcome,
  EventBody,
  PaymentProvider,
  ProviderOrder,
  VerifiedEvent,
  VerifiedReceipt,
} from "./provider.js";
import { signDelivery, verifyDelivery, type SignedHeaders } from "./standard-webhooks.js";
import {
  insertTestDelivery,
  lockTestOrder,
  openTestOrder,
  setTestOrderState,
  testDeliveries,
  type TestDeliveryRow,
  type TestOrderRow,
} from "../db/test-provider.js";

/** A signed webhook delivery the test provider produced; sending it again is a duplicate delivery. */
export interface Delivery {
  /** The provider event id (webhook-id). */
  id: string;
  type: "order.approved" | "order.declined" | "payment.captured";
  orderId: string;
  /** The raw JSON body, as signed. */
  body: string;
  headers: SignedHeaders;
}

/** The test-mode provider's name: its webhooks arrive at `/webhooks/test`. */
export const TEST_PROVIDER = "test";

export interface TestProviderOptions {
  /** Signs its webhooks and receipts; the installation's own, never one the source knows. */
  secret: BinaryLike;
  checkoutUrl: string;
  clock: Clock;
  /** Billing's transactions: its orders live in billing's schema, shared by every instance. */
  transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T>;
  /**
   * Auto mode: each new order is due to be approved by the provider itself a
   * moment after it opens (the `testProviderAuto` worker approves it and
   * delivers the order.approved webhook), kept in the order's row so no crash loses it.
   */
  auto: boolean;
}

/** How long auto mode waits before approving: billing writes its intent after the order opens. */
const AUTO_APPROVE_AFTER_MS = 500;

/**
 * The built-in test-mode provider. It behaves like a real one: orders live
 * in billing's database (every instance knows them, a restart forgets none), the buyer approves or declines them (`approve`, `decline`,
 * driven by tests), billing captures approved ones, and every change yields
 * a signed webhook delivery (Standard Webhooks) with its own event id, which
 * tests send, re-send or reorder. App store receipts are signed with the same secret.
 */
export class TestProvider implements PaymentProvider {
  readonly name = TEST_PROVIDER;

  constructor(private readonly options: TestProviderOptions) {}

  async createOrder(order: { currency: string; price: bigint; requestId: string }): Promise<ProviderOrder> {
    const at = this.options.clock.now();
    const approveAfter = this.options.auto ? new Date(at.getTime() + AUTO_APPROVE_AFTER_MS) : null;
    const { id } = await this.options.transaction((em) =>
      openTestOrder(em, { ...order, id: newId("tord"), at, approveAfter }),
    );
    return { orderId: id, checkoutUrl: `${this.options.checkoutUrl}?order=${id}` };
  }

  /** The buyer approves the order: answers the order.approved delivery. */
  approve(orderId: string): Promise<Delivery> {
    return this.options.transaction(async (em) => {
      const order = await this.order(em, orderId);
      if (order.state === "created") await setTestOrderState(em, { ...order, state: "approved" });
      return this.produce(em, order, "order.approved");
    });
  }

  /** The provider declines the order: answers the order.declined delivery. */
  decline(orderId: string, reason: string): Promise<Delivery> {
    return this.options.transaction(async (em) => {
      const order = await this.order(em, orderId);
      if (order.state === "created" || order.state === "approved")
        await setTestOrderState(em, { ...order, state: "declined", declineReason: reason });
      return this.produce(em, order, "order.declined", { reason });
    });
  }

  captureOrder(orderId: string): Promise<CaptureOutcome> {
    return this.options.transaction(async (em): Promise<CaptureOutcome> => {
      const order = await this.order(em, orderId);
      switch (order.state) {
        case "created":
          return { status: "not_approved" };
        case "declined":
          return { status: "declined", reason: order.declineReason };
        case "approved":
          await setTestOrderState(em, { ...order, state: "captured" });
          return { status: "captured", eventId: (await this.produce(em, order, "payment.captured")).id };
        case "captured": {
          // A capture asked again answers the first one, as real providers do.
          const first = (await testDeliveries(em, orderId)).find((d) => d.type === "payment.captured");
          return { status: "captured", eventId: first?.id };
        }
      }
    });
  }

  /** Every delivery produced for an order, oldest first. */
  deliveries(orderId: string): Promise<Delivery[]> {
    return this.options.transaction(async (em) => {
      await this.order(em, orderId);
      return (await testDeliveries(em, orderId)).map((row) => this.signed(row));
    });
  }

  /** A delivery signed again at `at`: a retry of the same event (same id, new timestamp). */
  resign(delivery: Delivery, at: Date): Delivery {
    return { ...delivery, headers: signDelivery(this.options.secret, delivery.id, Buffer.from(delivery.body), at) };
  }

  verifyWebhook(headers: Headers, body: Uint8Array): VerifiedEvent {
    const id = verifyDelivery(this.options.secret, headers, body, this.options.clock.now());
    return { id, ...this.readEvent(Buffer.from(body).toString("utf8")) };
  }

  readEvent(payload: string): EventBody {
    try {
      const event = JSON.parse(payload) as { type?: unknown; data?: { order_id?: unknown; reason?: unknown } };
      const { type, data } = event;
      if (typeof type === "string" && typeof data?.order_id === "string") {
        return { type, orderId: data.order_id, reason: typeof data.reason === "string" ? data.reason : "" };
      }
    } catch {
      // answered below
    }
    throw problem(
      400,
      "webhook.payload_invalid",
      "The delivery's body is not a test-provider event ({type, data: {order_id}}).",
    );
  }

  /** What an app store would sign for a purchase of the intent's app reference. */
  signReceipt(receipt: { appReference: string; currency: string; amount: bigint }): string {
    const body = Buffer.from(
      JSON.stringify({
        app_reference: receipt.appReference,
        currency: receipt.currency,
        amount: receipt.amount.toString(),
      }),
    ).toString("base64url");
    return `${body}.${this.receiptSignature(body).toString("base64url")}`;
  }

  verifyReceipt(receipt: string): VerifiedReceipt {
    const invalid = problem(400, "receipt.invalid", "The receipt's signature does not verify.", { field: "receipt" });
    const [body, signature, extra] = receipt.split(".");
    if (body === undefined || signature === undefined || extra !== undefined) throw invalid;
    const given = Buffer.from(signature, "base64url");
    const expected = this.receiptSignature(body);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid;
    const read = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as {
      app_reference: string;
      currency: string;
      amount: string;
    };
    return { appReference: read.app_reference, currency: read.currency, amount: BigInt(read.amount) };
  }

  private receiptSignature(body: string): Buffer {
    return createHmac("sha256", this.options.secret).update(`receipt.${body}`).digest();
  }

  private async order(em: EntityManager, orderId: string): Promise<TestOrderRow> {
    const order = await lockTestOrder(em, orderId);
    if (!order) throw problem(409, "provider.order_unknown", `The test provider has no order ${orderId}.`);
    return order;
  }

  private async produce(
    em: EntityManager,
    order: TestOrderRow,
    type: Delivery["type"],
    extra: Record<string, string> = {},
  ): Promise<Delivery> {
    const id = newId("tevt");
    const at = this.options.clock.now();
    const body = JSON.stringify({ id, type, created_at: at.toISOString(), data: { order_id: order.id, ...extra } });
    const row = { id, type, orderId: order.id, body, signedAt: at };
    await insertTestDelivery(em, row);
    return this.signed(row);
  }

  /** A stored delivery with its signature, as first sent. */
  private signed(row: TestDeliveryRow): Delivery {
    return {
      id: row.id,
      type: row.type as Delivery["type"],
      orderId: row.orderId,
      body: row.body,
      headers: signDelivery(this.options.secret, row.id, Buffer.from(row.body), row.signedAt),
    };
  }
}
