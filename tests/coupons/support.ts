import { expect } from "vitest";
import { outboxEvents } from "../support/outbox.js";
import type { TestPlatform } from "../support/platform.js";

/** A service token holding every coupons capability (a first-party backend acting for people and staff). */
export function backend(t: TestPlatform): Promise<string> {
  return t.token({
    kind: "service",
    svc: "web",
    caps: [
      "coupons.coupon.lookup",
      "coupons.report.create",
      "coupons.status.update",
      "coupons.coupon.submit",
      "coupons.merchant.manage",
      "coupons.merchant.resolve",
    ],
  });
}

let serial = 0;
/** A fresh name, so tests in one file never share merchants, hosts or people. */
export const unique = (prefix: string) => `${prefix}${Date.now().toString(36)}${(serial++).toString(36)}`;

export const staff = { "x-pf-subject": "usr_staff1", "x-pf-staff": "1" };

/** The subjects of the events the coupons outbox holds about one record, oldest first. */
export const eventsAbout = async (t: TestPlatform, id: string) =>
  (await outboxEvents(t, "coupons", id)).map((event) => event.subject);

/** The payloads of the coupons outbox, oldest first. */
export const outboxPayloads = async (t: TestPlatform) =>
  (await outboxEvents(t, "coupons")).map((event) => event.payload);

/** A merchant created by staff through the route (approved unless asked otherwise). */
export async function merchant(t: TestPlatform, token: string, body: Record<string, unknown> = {}) {
  const host = (body.host as string | undefined) ?? `${unique("shop")}.com`;
  const answer = await t.http("POST", "/coupons/api/v1/merchants", {
    token,
    headers: staff,
    body: { status: "MERCHANT_STATUS_APPROVED", ...body, host },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.merchant as { id: string; host: string; status: string; domains: unknown[] };
}

/** A code a person submitted for a merchant. */
export async function submitted(
  t: TestPlatform,
  token: string,
  merchantId: string,
  body: Record<string, unknown> = {},
  person = "usr_sub1",
) {
  const answer = await t.http("POST", "/coupons/api/v1/coupons/submit", {
    token,
    headers: { "x-pf-subject": person },
    body: { merchant_id: merchantId, code: unique("SAVE"), ...body },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body;
}
