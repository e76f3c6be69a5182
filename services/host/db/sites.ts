import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type RequiredEntityData } from "@mikro-orm/postgresql";
import { SiteSchema, type Site } from "../../../gen/pf/host/v1/projects_pb.js";
import { sql } from "../../kit/db/sql.js";
import type { HostSettings } from "../settings.js";
import { siteNotFound } from "./access.js";
import { takedownToProto } from "./projects.js";
import { SiteRow } from "./entities.js";

/** A site as it stands; 404 when there is none. */
export async function siteById(em: EntityManager, id: string): Promise<SiteRow> {
  const row = await em.findOne(SiteRow, { id });
  if (!row) throw siteNotFound();
  return row;
}

/** A site, locked for the rest of the transaction (its pointer and takedown change one at a time). */
export async function lockedSite(em: EntityManager, id: string): Promise<SiteRow> {
  const row = await em.findOne(SiteRow, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (!row) throw siteNotFound();
  return row;
}

/** Whether a site has this slug already. */
export async function slugInUse(em: EntityManager, slug: string): Promise<boolean> {
  return (await em.count(SiteRow, { slug })) > 0;
}

/** Stores a new site. */
export async function insertSite(em: EntityManager, row: RequiredEntityData<SiteRow>): Promise<SiteRow> {
  const entity = em.create(SiteRow, row);
  await em.flush();
  return entity;
}

/** Writes the changes made to a locked site row. */
export async function saveSite(em: EntityManager): Promise<void> {
  await em.flush();
}

/** Up to `rows` sites of a project, newest first, before the `before` id ("" from the newest). */
export function sitesPage(em: EntityManager, projectId: string, before: string, rows: number): Promise<SiteRow[]> {
  return em.find(
    SiteRow,
    { projectId, ...(before === "" ? {} : { id: { $lt: before } }) },
    { orderBy: { id: "desc" }, limit: rows },
  );
}

/**
 * Deletes a site with its deploys (kept as deleted; their file rows go, so the sweep frees their blobs) and its
 * domains. Answers the hostnames it served besides its own address.
 */
export async function deleteSite(em: EntityManager, site: SiteRow): Promise<string[]> {
  await sql(em, `update {deploys} set state = 'deleted' where site_id = ? and state <> 'deleted'`, [site.id]);
  await sql(em, `delete from {deploy_files} where deploy_id in (select id from {deploys} where site_id = ?)`, [
    site.id,
  ]);
  const domains = await sql<{ hostname: string }>(
    em,
    `delete from {domains} where site_id = ? and status = 'verified' returning hostname`,
    [site.id],
  );
  await sql(em, `delete from {domains} where site_id = ?`, [site.id]);
  em.remove(site);
  await em.flush();
  return domains.map((row) => row.hostname);
}

/** Where a site is served: http://<slug>.<sites domain>[:port]/ (no port for 80). */
export function siteUrl(settings: HostSettings, slug: string): string {
  const port = settings.sitesPort === 80 ? "" : `:${settings.sitesPort}`;
  return `http://${slug}.${settings.sitesDomain}${port}/`;
}

/** A site as answered. */
export function siteToProto(row: SiteRow, settings: HostSettings): Site {
  return create(SiteSchema, {
    id: row.id,
    projectId: row.projectId,
    slug: row.slug,
    activeDeployId: row.activeDeployId ?? "",
    url: siteUrl(settings, row.slug),
    takedown: takedownToProto(row),
    createdAt: timestampFromDate(row.createdAt),
  });
}
