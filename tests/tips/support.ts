import { expect } from "vitest";
import { deliver, testProvider } from "../billing/payments.js";
import type { HttpAnswer, TestPlatform } from "../support/platform.js";

export { fund, person } from "../billing/support.js";
export { deliver, orderOf, testProvider } from "../billing/payments.js";

export const usd = (minor: number) => ({ minor_units: minor, currency: "USD" });

/** Settings that let the recovery worker complete pending checkouts quickly in tests. */
export const TIPS_ENV = { PF_TIPS_RECOVERY_EVERY_MS: "300", PF_TIPS_RECOVERY_AFTER_MS: "300" };

/** Every first-party capability of the tips payments side, for a first-party service relaying people. */
export const FIRST_PARTY_CAPS = [
  "tips.checkout.create",
  "tips.superchat.create",
  "tips.media_request.create",
  "tips.goal.create",
  "tips.goal.update",
  "tips.goal.close",
  "tips.interaction.list",
  "tips.interaction.get",
  "tips.profile.get",
  "tips.profile.update",
];

let keys = 0;
/** A fresh Idempotency-Key. */
export const newKey = () => `key-${++keys}-${Date.now().toString(36)}`;

/** Calls the tips service through the gateway as one person (a user token). */
export function as(t: TestPlatform, token: string) {
  return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpAnswer> =>
    t.http(method, `/tips/api/v1${path}`, { token, body, headers });
}

export const userToken = (t: TestPlatform, sub: string) => t.token({ kind: "user", sub });

/** Creates or updates a creator's profile with the creator's own token; accepting and page on by default. */
export async function setProfile(t: TestPlatform, creator: string, fields: Record<string, unknown> = {}) {
  const answer = await as(t, await userToken(t, creator))("PATCH", `/profiles/${creator}`, {
    page_enabled: true,
    accepting: true,
    ...fields,
  });
  if (answer.status !== 200) throw new Error(`profile: ${JSON.stringify(answer.body)}`);
  return answer.body.profile;
}

/** A service token reading billing balances. */
export async function balanceReader(t: TestPlatform) {
  const token = await t.token({ kind: "service", svc: "ops", caps: ["billing.balance.read"] });
  return async (subject: string) => {
    const answer = await t.http("GET", `/billing/api/v1/balances/${subject}`, { token });
    return answer.body.balances as { currency: string; spendable_credit: string; creator_payable: string }[];
  };
}

/** Billing transactions referencing one tips interaction. */
export async function billingTransactionsFor(t: TestPlatform, interactionId: string): Promise<number> {
  const em = t.platform.contexts.get("billing")!.orm.em.fork();
  const [row] = await em
    .getConnection()
    .execute<{ count: string }[]>(
      `select count(*) as count from billing.transactions where reference_id = ? or reference_id in (select id from billing.intents where reference_id = ?)`,
      [interactionId, interactionId],
    );
  return Number(row.count);
}

/** Rows of a tips table with one id. */
export async function tipsRows(t: TestPlatform, table: string, id: string): Promise<number> {
  const em = t.platform.contexts.get("tips")!.orm.em.fork();
  const [row] = await em
    .getConnection()
    .execute<{ count: string }[]>(`select count(*) as count from tips.${table} where id = ?`, [id]);
  return Number(row.count);
}

/** Drives the test provider as the buyer and the provider would: approve, capture, webhook. */
export async function payAtProvider(t: TestPlatform, checkoutUrl: string): Promise<void> {
  const order = new URL(checkoutUrl).searchParams.get("order")!;
  const provider = testProvider(t);
  await provider.approve(order);
  await provider.captureOrder(order);
  const captured = (await provider.deliveries(order)).find((d) => d.type === "payment.captured")!;
  expect((await deliver(t, captured)).body.status).toBe("PROVIDER_EVENT_STATUS_APPLIED");
}
