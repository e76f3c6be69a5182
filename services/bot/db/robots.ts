import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { OperatorSchema, RobotSchema, type Operator, type Robot } from "../../../gen/pf/bot/v1/robots_pb.js";
import { problem } from "../../kit/handler/problem.js";
import { sql } from "../../kit/db/sql.js";
import type { Role } from "../domain/roles.js";
import { OperatorRow, RobotRow } from "./entities.js";

export const robotNotFound = () => problem(404, "bot.robot_not_found", "There is no such robot.");

/** A robot that is not deleted, locked for the rest of the transaction when `lock`; 404 otherwise. */
export async function liveRobot(em: EntityManager, id: string, lock = false): Promise<RobotRow> {
  const row = await em.findOne(RobotRow, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
  if (!row || row.deletedAt) throw robotNotFound();
  return row;
}

/** A robot, deleted or not (the role a person held on it). */
export function robotById(em: EntityManager, id: string): Promise<RobotRow | null> {
  return em.findOne(RobotRow, { id });
}

/** Stores a new robot. */
export async function insertRobot(em: EntityManager, row: RobotRow): Promise<RobotRow> {
  const entity = em.create(RobotRow, row);
  await em.flush();
  return entity;
}

/** Writes the changes made to a robot row. */
export async function saveRobot(em: EntityManager): Promise<void> {
  await em.flush();
}

/** The operator entries of a robot, by person. */
export function operatorsOf(em: EntityManager, robotId: string): Promise<OperatorRow[]> {
  return em.find(OperatorRow, { robotId }, { orderBy: { subject: "asc" } });
}

/** A person's operator entry on a robot, if any. */
export function operatorEntry(em: EntityManager, robotId: string, subject: string): Promise<OperatorRow | null> {
  return em.findOne(OperatorRow, { robotId, subject });
}

/** Sets operator entries whole (role and allowlist), adding those that are new. */
export async function setOperators(
  em: EntityManager,
  robotId: string,
  entries: readonly { subject: string; role: string; commands: string[] }[],
  at: Date,
): Promise<void> {
  for (const entry of entries) {
    const found = await em.findOne(OperatorRow, { robotId, subject: entry.subject });
    if (found) Object.assign(found, { role: entry.role, commands: entry.commands });
    else em.create(OperatorRow, { robotId, ...entry, addedAt: at });
  }
  await em.flush();
}

/** Takes people off a robot's operators. */
export async function removeOperators(em: EntityManager, robotId: string, subjects: string[]): Promise<void> {
  if (subjects.length > 0) await em.nativeDelete(OperatorRow, { robotId, subject: { $in: subjects } });
}

/**
 * Up to `rows` robots of `owner`, newest first, before the `before` id ("" from the newest). With `reader` (a
 * person's own token), only those on which the reader is owner or holds one of `roles`.
 */
export async function robotsPage(
  em: EntityManager,
  filter: { owner: string; before: string; reader?: string; roles: readonly Role[] },
  rows: number,
): Promise<RobotRow[]> {
  const found = await sql<{ id: string }>(
    em,
    `select r.id from {robots} r
      where r.owner = ? and r.deleted_at is null and (? = '' or r.id < ?)
        and (?::text is null or r.owner = ? or exists (
          select 1 from {robot_operators} o where o.robot_id = r.id and o.subject = ?
            and o.role in (select jsonb_array_elements_text(?::jsonb))))
      order by r.id desc limit ?`,
    [
      filter.owner,
      filter.before,
      filter.before,
      filter.reader ?? null,
      filter.reader ?? "",
      filter.reader ?? "",
      JSON.stringify(filter.roles),
      rows,
    ],
  );
  if (found.length === 0) return [];
  const robots = await em.find(RobotRow, { id: { $in: found.map((row) => row.id) } }, { orderBy: { id: "desc" } });
  return robots;
}

/** The operator entries of several robots, by robot. */
export async function operatorsOfMany(em: EntityManager, robotIds: string[]): Promise<Map<string, OperatorRow[]>> {
  const rows = robotIds.length === 0 ? [] : await em.find(OperatorRow, { robotId: { $in: robotIds } });
  const byRobot = new Map<string, OperatorRow[]>();
  for (const row of rows.sort((a, b) => a.subject.localeCompare(b.subject)))
    byRobot.set(row.robotId, [...(byRobot.get(row.robotId) ?? []), row]);
  return byRobot;
}

/** The robot whose unused, unexpired pairing code has this hash, locked (a code pairs one device). */
export function robotByPairingCode(em: EntityManager, codeHash: string, now: Date): Promise<RobotRow | null> {
  return em.findOne(
    RobotRow,
    { pairingCodeHash: codeHash, pairingCodeExpiresAt: { $gt: now }, deletedAt: null },
    { lockMode: LockMode.PESSIMISTIC_WRITE },
  );
}

/** An operator entry as answered. */
export function operatorToProto(row: OperatorRow): Operator {
  return create(OperatorSchema, { subject: row.subject, role: row.role, commands: row.commands });
}

/** A robot as the routes answer it: never its pairing code or the code's hash, only when an unused one expires. */
export function robotToProto(row: RobotRow, operators: OperatorRow[], now: Date): Robot {
  const code = row.pairingCodeHash !== null && row.pairingCodeExpiresAt && row.pairingCodeExpiresAt > now;
  return create(RobotSchema, {
    id: row.id,
    owner: row.owner,
    name: row.name,
    configuration: row.configuration as JsonObject,
    operators: operators.map(operatorToProto),
    estop: {
      latched: row.estopLatched,
      changedAt: row.estopChangedAt ? timestampFromDate(row.estopChangedAt) : undefined,
      changedBy: row.estopChangedBy,
      actingFor: row.estopActingFor,
    },
    pairingCodeExpiresAt: code ? timestampFromDate(row.pairingCodeExpiresAt!) : undefined,
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
    deletedAt: row.deletedAt ? timestampFromDate(row.deletedAt) : undefined,
  });
}
