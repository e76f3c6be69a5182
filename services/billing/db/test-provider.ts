import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";

/** A test-mode provider order as stored. */
export interface TestOrderRow {
  id: string;
  currency: string;
  price: bigint;
  state: "created" | "approved" | "declined" | "captured";
  declineReason: string;
}

/** A webhook delivery the test-mode provider produced, as stored: its headers are signed again from it. */
export interface TestDeliveryRow {
  id: string;
  type: string;
  orderId: string;
  body: string;
  signedAt: Date;
}

/**
 * Opens an order once per request id: the answer is the order the request
 * opened, first now (`opened`) or by an earlier call, on any instance.
 */
export async function openTestOrder(
  em: EntityManager,
  order: { id: string; requestId: string; currency: string; price: bigint; at: Date; approveAfter: Date | null },
): Promise<{ id: string; opened: boolean }> {
  const [inserted] = await sql<{ id: string }>(
    em,
    `insert into {test_provider_orders} (id, request_id, currency, price, created_at, approve_after) values (?, ?, ?, ?, ?, ?)
     on conflict (request_id) do nothing returning id`,
    [order.id, order.requestId, order.currency, order.price.toString(), order.at, order.approveAfter],
  );
  if (inserted) return { id: inserted.id, opened: true };
  // Read in a statement of its own: it sees an order a concurrent request committed meanwhile.
  const [earlier] = await sql<{ id: string }>(em, `select id from {test_provider_orders} where request_id = ?`, [
    order.requestId,
  ]);
  return { id: earlier!.id, opened: false };
}

/** The order, locked until the transaction ends; undefined when no instance opened it. */
export async function lockTestOrder(em: EntityManager, id: string): Promise<TestOrderRow | undefined> {
  const [row] = await sql<{
    id: string;
    currency: string;
    price: string;
    state: TestOrderRow["state"];
    decline_reason: string;
  }>(
    em,
    `select id, currency, price, state, decline_reason from {test_provider_orders}
     where id = ? for update`,
    [id],
  );
  return row && { ...row, price: BigInt(row.price), declineReason: row.decline_reason };
}

export async function setTestOrderState(em: EntityManager, order: TestOrderRow): Promise<void> {
  await sql(em, `update {test_provider_orders} set state = ?, decline_reason = ? where id = ?`, [
    order.state,
    order.declineReason,
    order.id,
  ]);
}

export async function insertTestDelivery(em: EntityManager, delivery: TestDeliveryRow): Promise<void> {
  await sql(em, `insert into {test_provider_deliveries} (id, order_id, type, body, signed_at) values (?, ?, ?, ?, ?)`, [
    delivery.id,
    delivery.orderId,
    delivery.type,
    delivery.body,
    delivery.signedAt,
  ]);
}

/** The order's deliveries, oldest first. */
export async function testDeliveries(em: EntityManager, orderId: string): Promise<TestDeliveryRow[]> {
  const rows = await sql<{ id: string; type: string; order_id: string; body: string; signed_at: string | Date }>(
    em,
    `select id, type, order_id, body, signed_at from {test_provider_deliveries}
     where order_id = ? order by id`,
    [orderId],
  );
  return rows.map((r) => ({
    id: r.id,
    type: r.type,
    orderId: r.order_id,
    body: r.body,
    signedAt: new Date(r.signed_at),
  }));
}

/** An order auto mode is due to approve, and how often it tried before. */
export interface DueApproval {
  id: string;
  attempts: number;
}

/**
 * Takes the orders whose automatic approval is due at `at` (oldest first):
 * each is moved past `until` in the same statement, so an instance that
 * crashes holding them leaves them due again then.
 */
export async function takeDueApprovals(
  em: EntityManager,
  at: Date,
  until: Date,
  limit: number,
): Promise<DueApproval[]> {
  return sql<DueApproval>(
    em,
    `update {test_provider_orders} set approve_after = ? where id in (
       select id from {test_provider_orders} where approve_after <= ? order by approve_after limit ? for update skip locked
     ) returning id, approve_attempts as attempts`,
    [until, at, limit],
  );
}

/** The next automatic approval of an order (null: none), and the attempts made. */
export async function scheduleApproval(
  em: EntityManager,
  id: string,
  after: Date | null,
  attempts: number,
): Promise<void> {
  await sql(em, `update {test_provider_orders} set approve_after = ?, approve_attempts = ? where id = ?`, [
    after,
    attempts,
    id,
  ]);
}
