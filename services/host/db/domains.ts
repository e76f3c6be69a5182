import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager } from "@mikro-orm/postgresql";
import { DomainSchema, DomainStatus, type Domain } from "../../../gen/pf/host/v1/domains_pb.js";
import { sql } from "../../kit/db/sql.js";
import { problem } from "../../kit/handler/problem.js";
import { routingRecords, verificationRecord } from "../domain/hostnames.js";
import { DomainRow } from "./entities.js";

export const domainNotFound = () => problem(404, "host.domain.not_found", "There is no such domain.");

/** What the domain routes read of a site: its project's environment, and whether it or its project is taken down. */
export interface DomainSite {
  id: string;
  projectId: string;
  slug: string;
  environment: string;
  takenDown: boolean;
}

/** A site as the domain routes read it; 404 host.site.not_found when there is none (deleted since admission). */
export async function domainSite(em: EntityManager, siteId: string): Promise<DomainSite> {
  const [found] = await sql<{ id: string; project_id: string; slug: string; environment: string; taken_down: boolean }>(
    em,
    `select s.id, s.project_id, s.slug, p.environment,
            (s.taken_down_at is not null or p.taken_down_at is not null) as taken_down
       from {sites} s join {projects} p on p.id = s.project_id
      where s.id = ?`,
    [siteId],
  );
  if (!found) throw problem(404, "host.site.not_found", "There is no such site.");
  return {
    id: found.id,
    projectId: found.project_id,
    slug: found.slug,
    environment: found.environment,
    takenDown: found.taken_down,
  };
}

/** A domain if there is one, locked for the rest of the transaction when `lock`. */
export function findDomain(em: EntityManager, id: string, lock = false): Promise<DomainRow | null> {
  return em.findOne(DomainRow, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {});
}

/** A domain, as `findDomain`; 404 host.domain.not_found when there is none. */
export async function domainById(em: EntityManager, id: string, lock = false): Promise<DomainRow> {
  const row = await findDomain(em, id, lock);
  if (!row) throw domainNotFound();
  return row;
}

/** A site's domains, oldest first. */
export function domainsOfSite(em: EntityManager, siteId: string): Promise<DomainRow[]> {
  return em.find(DomainRow, { siteId }, { orderBy: { id: "asc" } });
}

/** A site's domain of this name, if it was added. */
export function siteDomainNamed(em: EntityManager, siteId: string, hostname: string): Promise<DomainRow | null> {
  return em.findOne(DomainRow, { siteId, hostname });
}

/** Whether another site has verified this domain name (it is that site's, platform-wide). */
export async function verifiedElsewhere(em: EntityManager, hostname: string, siteId: string): Promise<boolean> {
  return (await em.count(DomainRow, { hostname, status: "verified", siteId: { $ne: siteId } })) > 0;
}

/** Stores a new domain. */
export async function insertDomain(em: EntityManager, row: DomainRow): Promise<DomainRow> {
  const entity = em.create(DomainRow, row);
  await em.flush();
  return entity;
}

/** Writes the changes made to domain rows. */
export async function saveDomains(em: EntityManager): Promise<void> {
  await em.flush();
}

/** Deletes a domain. */
export async function removeDomain(em: EntityManager, row: DomainRow): Promise<void> {
  em.remove(row);
  await em.flush();
}

/** Up to `limit` verified domains last checked at or before `before`, the longest unchecked first: the reverify worker's batch. */
export async function domainsDue(em: EntityManager, before: Date, limit: number): Promise<DomainRow[]> {
  return em.find(
    DomainRow,
    { status: "verified", $or: [{ checkedAt: null }, { checkedAt: { $lte: before } }] },
    { orderBy: { checkedAt: "asc nulls first", id: "asc" }, limit },
  );
}

/** A domain as answered: its verification record, and the records routing it to `<slug>.<sites domain>`. */
export function domainToProto(
  row: DomainRow,
  slug: string,
  settings: { sitesDomain: string; edgeAddresses: readonly string[] },
): Domain {
  return create(DomainSchema, {
    id: row.id,
    siteId: row.siteId,
    hostname: row.hostname,
    status: row.status === "verified" ? DomainStatus.VERIFIED : DomainStatus.PENDING,
    verification: verificationRecord(row.hostname, row.token),
    routing: routingRecords(row.hostname, `${slug}.${settings.sitesDomain}`, settings.edgeAddresses),
    createdAt: timestampFromDate(row.createdAt),
    verifiedAt: row.verifiedAt ? timestampFromDate(row.verifiedAt) : undefined,
    checkedAt: row.checkedAt ? timestampFromDate(row.checkedAt) : undefined,
    lastError: row.lastError,
  });
}
