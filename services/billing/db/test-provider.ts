import type { EntityManager } from "@mikro-orm/postgresql";
import { qualified } from "../../kit/db/orm.js";

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
  const table = qualified(em, "test_provider_orders");
  const connection = em.getConnection();
  const [inserted] = await connection.execute<{ id: string }[]>(
    `insert into ${table} (id, request_id, currency, price, created_at, approve_after) values (?, ?, ?, ?, ?, ?)
     on conflict (request_id) do nothing returning id`,
    [order.id, order.requestId, order.currency, order.price.toString(), order.at, order.approveAfter],
    "all",
    em.getTransactionContext(),
  );
  if (inserted) return { id: inserted.id, opened: true };
  // Read in a statement of its own: it sees an order a concurrent request committed meanwhile.
  const [earlier] = await connection.execute<{ id: string }[]>(
    `select id from ${table} where request_id = ?`,
    [order.requestId],
    "all",
    em.getTransactionContext(),
  );
  return { id: earlier!.id, opened: false };
}

/** The order, locked until the transaction ends; undefined when no instance opened it. */
export async function lockTestOrder(em: EntityManager, id: string): Promise<TestOrderRow | undefined> {
  const [row] = await em
    .getConnection()
    .execute<{ id: string; currency: string; price: string; state: TestOrderRow["state"]; decline_reason: string }[]>(
      `select id, currency, price, state, decline_reason from ${qualified(em, "test_provider_orders")}
     where id = ? for update`,
      [id],
      "all",
      em.getTransactionContext(),
    );
  return row && { ...row, price: BigInt(row.price), declineReason: row.decline_reason };
}

export async function setTestOrderState(em: EntityManager, order: TestOrderRow): Promise<void> {
  await em
    .getConnection()
    .execute(
      `update ${qualified(em, "test_provider_orders")} set state = ?, decline_reason = ? where id = ?`,
      [order.state, order.declineReason, order.id],
      "run",
      em.getTransactionContext(),
    );
}

export async function insertTestDelivery(em: EntityManager, delivery: TestDeliveryRow): Promise<void> {
  await em
    .getConnection()
    .execute(
      `insert into ${qualified(em, "test_provider_deliveries")} (id, order_id, type, body, signed_at) values (?, ?, ?, ?, ?)`,
      [delivery.id, delivery.orderId, delivery.type, delivery.body, delivery.signedAt],
      "run",
      em.getTransactionContext(),
    );
}

/** The order's deliveries, oldest first. */
export async function testDeliveries(em: EntityManager, orderId: string): Promise<TestDeliveryRow[]> {
  const rows = await em
    .getConnection()
    .execute<{ id: string; type: string; order_id: string; body: string; signed_at: string | Date }[]>(
      `select id, type, order_id, body, signed_at from ${qualified(em, "test_provider_deliveries")}
     where order_id = ? order by id`,
      [orderId],
      "all",
      em.getTransactionContext(),
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
  const table = qualified(em, "test_provider_orders");
  return em.getConnection().execute<DueApproval[]>(
    `update ${table} set approve_after = ? where id in (
       select id from ${table} where approve_after <= ? order by approve_after limit ? for update skip locked
     ) returning id, approve_attempts as attempts`,
    [until, at, limit],
    "all",
    em.getTransactionContext(),
  );
}

/** The next automatic approval of an order (null: none), and the attempts made. */
export async function scheduleApproval(
  em: EntityManager,
  id: string,
  after: Date | null,
  attempts: number,
): Promise<void> {
  const table = qualified(em, "test_provider_orders");
  await em
    .getConnection()
    .execute(
      `update ${table} set approve_after = ?, approve_attempts = ? where id = ?`,
      [after, attempts, id],
      "run",
      em.getTransactionContext(),
    );
}
