import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { ArtifactSchema, DeviceCapsSchema, type DeviceCaps } from "../../../gen/pf/bot/v1/link_pb.js";
import { DeviceSchema, DeviceStatus, type Device } from "../../../gen/pf/bot/v1/robots_pb.js";
import { problem } from "../../kit/handler/problem.js";
import { sql } from "../../kit/db/sql.js";
import { DeviceRow } from "./entities.js";

export const deviceNotFound = () => problem(404, "bot.device_not_found", "There is no such device.");

/** A device by id (any status), locked for the rest of the transaction when `lock`. */
export function deviceById(em: EntityManager, id: string, lock = false): Promise<DeviceRow | null> {
  return em.findOne(DeviceRow, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
}

/** The device whose credential has this hash (any status). */
export function deviceByCredential(em: EntityManager, credentialHash: string): Promise<DeviceRow | null> {
  return em.findOne(DeviceRow, { credentialHash });
}

/** Stores a newly paired device. */
export async function insertDevice(em: EntityManager, row: DeviceRow): Promise<DeviceRow> {
  const entity = em.create(DeviceRow, row);
  await em.flush();
  return entity;
}

/** Writes the changes made to device rows. */
export async function saveDevices(em: EntityManager): Promise<void> {
  await em.flush();
}

/** The paired (not revoked) devices of a robot, locked: a robot's delete revokes them all. */
export function pairedDevicesOf(em: EntityManager, robotId: string): Promise<DeviceRow[]> {
  return em.find(DeviceRow, { robotId, status: "paired" }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

/** Up to `rows` devices of a robot, newest first, before the `before` id ("" from the newest). */
export function devicesPage(em: EntityManager, robotId: string, before: string, rows: number): Promise<DeviceRow[]> {
  return em.find(DeviceRow, before === "" ? { robotId } : { robotId, id: { $lt: before } }, {
    orderBy: { id: "desc" },
    limit: rows,
  });
}

/** A device a dispatch may go to: what placement weighs, read in the one statement that finds it. */
export type Candidate = Pick<DeviceRow, "id" | "robotId" | "caps"> & { estopped: boolean };

/**
 * The online devices (a link heard from since `since`) of robots neither deleted nor e-stopped that advertise
 * `jobClass`, fewest open jobs first: where a dispatch without node_id goes.
 */
export async function candidateDevices(em: EntityManager, jobClass: string, since: Date): Promise<Candidate[]> {
  return sql<Candidate>(
    em,
    `select d.id, d.robot_id as "robotId", d.caps, r.estop_latched as estopped,
            (select count(*) from {dispatched_jobs} j where j.node_id = d.id and j.state <> 'ended')::int as open
       from {devices} d join {robots} r on r.id = d.robot_id
      where d.status = 'paired' and d.link_id is not null and d.last_seen_at > ? and r.deleted_at is null
        and ? = any(d.classes)
      order by open, d.last_seen_at desc`,
    [since, jobClass],
  );
}

/** Marks the devices whose links this instance holds as heard from now (the presence heartbeat). */
export async function touchLinks(em: EntityManager, linkIds: string[], at: Date): Promise<void> {
  await em.nativeUpdate(DeviceRow, { linkId: { $in: linkIds } }, { lastSeenAt: at });
}

/** Marks a link closed, unless the device has opened another since. */
export async function linkClosed(em: EntityManager, deviceId: string, linkId: string): Promise<void> {
  await sql(em, `update {devices} set link_id = null, link_instance = null where id = ? and link_id = ?`, [
    deviceId,
    linkId,
  ]);
}

/** Marks every link an instance holds closed (it stops). */
export async function instanceLinksClosed(em: EntityManager, instance: string): Promise<void> {
  await em.nativeUpdate(DeviceRow, { linkInstance: instance }, { linkId: null, linkInstance: null });
}

/** Whether a device holds a link heard from since `since`. */
export function isOnline(row: DeviceRow, since: Date): boolean {
  return row.status === "paired" && row.linkId != null && row.lastSeenAt != null && row.lastSeenAt > since;
}

/** The caps a device advertised in its last hello. */
export function capsOf(row: Pick<DeviceRow, "caps">): DeviceCaps | undefined {
  return row.caps ? fromJson(DeviceCapsSchema, row.caps as JsonValue) : undefined;
}

/** A device as the routes answer it: never its credential, publish key or their hashes. */
export function deviceToProto(row: DeviceRow, onlineSince: Date): Device {
  return create(DeviceSchema, {
    id: row.id,
    robotId: row.robotId,
    name: row.name,
    status: row.status === "revoked" ? DeviceStatus.REVOKED : DeviceStatus.PAIRED,
    online: isOnline(row, onlineSince),
    lastSeenAt: row.lastSeenAt ? timestampFromDate(row.lastSeenAt) : undefined,
    connectedAt: row.connectedAt ? timestampFromDate(row.connectedAt) : undefined,
    agentVersion: row.agentVersion,
    classes: row.classes,
    artifacts: row.artifacts.map((artifact) => fromJson(ArtifactSchema, artifact as JsonValue)),
    caps: capsOf(row),
    pairedAt: timestampFromDate(row.pairedAt),
    rotatedAt: row.rotatedAt ? timestampFromDate(row.rotatedAt) : undefined,
    revokedAt: row.revokedAt ? timestampFromDate(row.revokedAt) : undefined,
    revokeReason: row.revokeReason,
  });
}
