/**
 * Where a payment provider plugs in. Billing talks to providers only through
 * this interface; `test.ts` is the built-in test-mode provider.
 */

/** An order opened at the provider for an intent. */
export interface ProviderOrder {
  /** The provider's order id, unique per provider. */
  orderId: string;
  /** Where the buyer approves the payment. */
  checkoutUrl: string;
}

/** What a capture of an approved order came to. */
export type CaptureOutcome =
  { status: "captured"; eventId?: string } | { status: "declined"; reason: string } | { status: "not_approved" };

/** What a provider event says, read from its payload. */
export interface EventBody {
  /** order.approved, order.declined, payment.captured… */
  type: string;
  /** The order it concerns. */
  orderId: string;
  /** Why the provider declined (order.declined). */
  reason: string;
}

/** A webhook delivery whose signature checked out. */
export interface VerifiedEvent extends EventBody {
  /** The provider's event id: a duplicate delivery carries the same one. */
  id: string;
}

/** A store receipt whose signature checked out. */
export interface VerifiedReceipt {
  /** The intent's app reference the receipt pays. */
  appReference: string;
  currency: string;
  amount: bigint;
}

export interface PaymentProvider {
  readonly name: string;
  /**
   * Opens an order for the price billing set. The same requestId opens no
   * second order (providers take it as their idempotency key).
   */
  createOrder(order: {
    intentId: string;
    currency: string;
    price: bigint;
    description: string;
    returnUrl: string;
    requestId: string;
  }): Promise<ProviderOrder>;
  /** Captures an order the buyer approved. */
  captureOrder(orderId: string): Promise<CaptureOutcome>;
  /** Verifies a webhook delivery's signature and reads it; throws 401 webhook.signature_invalid or 400 webhook.payload_invalid. */
  verifyWebhook(headers: Headers, body: Uint8Array): VerifiedEvent;
  /** Reads a stored event's payload again (applying it later). */
  readEvent(payload: string): EventBody;
  /** Verifies a store receipt; throws a 400 problem when it does not verify. */
  verifyReceipt(receipt: string): VerifiedReceipt;
}

/** The providers an instance knows, by name. */
export interface ProviderRegistry {
  readonly defaultProvider: string;
  /** The provider, or 404 provider.unknown naming the known ones. */
  get(name: string): PaymentProvider;
}
