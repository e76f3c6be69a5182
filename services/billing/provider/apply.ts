import type { BillingContext } from "../context.js";

// STUB: being written. Applies stored provider events that are pending (or held, once thawed), in order.
export async function applyProviderEvents(_ctx: BillingContext): Promise<void> {}
