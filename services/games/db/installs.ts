import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { type ModInstall, ModInstallSchema } from "../../../gen/pf/games/v1/mods_pb.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { problem } from "../../kit/handler/problem.js";
import { statusToProto, tierToProto } from "../domain/vocabulary.js";
import { ModInstallRow } from "./entities.js";

export const modNotFound = () => problem(404, "games.mod_not_found", "There is no such mod install.");

/** An install as the hot reads answer it (timestamps as pg gives them). */
type StoredInstall = Omit<ModInstallRow, "installedAt" | "updatedAt" | "contentPack"> & {
  installedAt: string | Date;
  updatedAt: string | Date;
  contentPack?: Record<string, unknown>;
};

const COLUMNS = `id, mod_id as "modId", name, version, game, server, status, trust_tier as "trustTier", requested, granted,
  manifest, content_digest as "contentDigest", content_size as "contentSize", revision, status_reason as "statusReason",
  installed_at as "installedAt", updated_at as "updatedAt"`;

const installById = new HotRead<StoredInstall, [string]>(
  "installs.by_id",
  `select ${COLUMNS}, content_pack as "contentPack" from {mod_installs} where id = $1`,
);

// Filters left empty match everything; ids are time-sortable, so id order is newest first.
const installsPage = new HotRead<StoredInstall, [string, string, string, string, number]>(
  "installs.page",
  `select ${COLUMNS} from {mod_installs}
    where ($1 = '' or game = $1) and ($2 = '' or server = $2) and ($3 = '' or status = $3) and ($4 = '' or id < $4)
    order by id desc limit $5`,
);

/** One install with its content pack (a hot read: public, polled by game servers); 404 when missing. */
export async function readInstall(ctx: ReadContext, id: string): Promise<ModInstall> {
  const [row] = await installById.run(ctx, id);
  if (!row) throw modNotFound();
  return installToProto(row);
}

/** Up to `rows` installs matching the filters, newest first, before the cursor's id (a hot read). */
export async function readInstalls(
  ctx: ReadContext,
  filters: { game: string; server: string; status: string; before: string },
  rows: number,
): Promise<ModInstall[]> {
  const found = await installsPage.run(ctx, filters.game, filters.server, filters.status, filters.before, rows);
  return found.map(installToProto);
}

/** The install, locked for the rest of the transaction: manage actions on one install run one after another. */
export async function lockedInstall(em: EntityManager, id: string): Promise<ModInstallRow> {
  const row = await em.findOne(ModInstallRow, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (!row) throw modNotFound();
  return row;
}

/** Whether the install exists (any status). */
export async function installExists(em: EntityManager, id: string): Promise<boolean> {
  return (await em.count(ModInstallRow, { id })) > 0;
}

/** The live (not revoked) install of a mod in a scope, if any. */
export function liveInstall(em: EntityManager, scope: { game: string; server: string; modId: string }) {
  return em.findOne(ModInstallRow, { ...scope, status: { $ne: "revoked" } });
}

/** Whether this version of the mod was revoked in this scope (revoked for good: it is not installed again). */
export async function versionRevoked(
  em: EntityManager,
  scope: { game: string; server: string; modId: string; version: string },
): Promise<boolean> {
  return (await em.count(ModInstallRow, { ...scope, status: "revoked" })) > 0;
}

/** Stores a new install. */
export async function insertInstall(em: EntityManager, row: ModInstallRow): Promise<ModInstallRow> {
  const entity = em.create(ModInstallRow, row);
  await em.flush();
  return entity;
}

/** An install as the routes answer it; lists leave the content pack out. */
export function installToProto(row: StoredInstall | ModInstallRow): ModInstall {
  return create(ModInstallSchema, {
    id: row.id,
    modId: row.modId,
    name: row.name,
    version: row.version,
    game: row.game,
    server: row.server,
    status: statusToProto(row.status),
    trustTier: tierToProto(row.trustTier),
    requestedCapabilities: row.requested,
    grantedCapabilities: row.granted,
    manifest: row.manifest as JsonObject,
    contentPack: row.contentPack as JsonObject | undefined,
    contentDigest: row.contentDigest,
    contentSize: row.contentSize,
    revision: row.revision,
    installedAt: timestampFromDate(new Date(row.installedAt)),
    updatedAt: timestampFromDate(new Date(row.updatedAt)),
    statusReason: row.statusReason,
  });
}
