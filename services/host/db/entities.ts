import { defineEntity, p, type InferEntity } from "@mikro-orm/postgresql";

/**
 * A tenant project, owned by the person who created it (`created_by`; owners are members with role owner).
 * `environment`: production or sandbox. `quota_*`: its caps, set by network staff (defaults from settings).
 * `taken_down_*`: set while network staff keep every site of it from being served.
 */
export const ProjectRow = defineEntity({
  name: "ProjectRow",
  tableName: "projects",
  checks: [{ name: "projects_environment_check", expression: "environment in ('production', 'sandbox')" }],
  properties: {
    id: p.text().primary(),
    name: p.text(),
    createdBy: p.text(),
    environment: p.text(),
    createdAt: p.datetime(),
    quotaStorageBytes: p.bigint("number"),
    quotaDeployFiles: p.integer(),
    quotaDeployBytes: p.bigint("number"),
    quotaFileBytes: p.bigint("number"),
    quotaSites: p.integer(),
    takenDownAt: p.datetime().nullable(),
    takenDownBy: p.text().default(""),
    takenDownReason: p.text().default(""),
  },
});
export type ProjectRow = InferEntity<typeof ProjectRow>;

/** A principal's role in a project: usr_… or app:<id> (never an owner); owner, deployer or viewer. */
export const MemberRow = defineEntity({
  name: "MemberRow",
  tableName: "members",
  indexes: [{ name: "members_by_principal", properties: ["principal", "projectId"] }],
  checks: [
    { name: "members_role_check", expression: "role in ('owner', 'deployer', 'viewer')" },
    { name: "members_app_not_owner_check", expression: "role <> 'owner' or left(principal, 4) = 'usr_'" },
  ],
  properties: {
    projectId: p.text().primary(),
    principal: p.text().primary(),
    role: p.text(),
    addedAt: p.datetime(),
  },
});
export type MemberRow = InferEntity<typeof MemberRow>;

/**
 * A static site of a project, served at <slug>.<sites domain> (the slug is unique platform-wide). The activation
 * pointer is `active_deploy_id`: one UPDATE switches it. `taken_down_*`: set while network staff keep it down.
 */
export const SiteRow = defineEntity({
  name: "SiteRow",
  tableName: "sites",
  indexes: [{ name: "sites_by_project", properties: ["projectId", "id"] }],
  uniques: [{ name: "sites_slug_unique", properties: ["slug"] }],
  properties: {
    id: p.text().primary(),
    projectId: p.text(),
    slug: p.text(),
    activeDeployId: p.text().nullable(),
    createdAt: p.datetime(),
    takenDownAt: p.datetime().nullable(),
    takenDownBy: p.text().default(""),
    takenDownReason: p.text().default(""),
  },
});
export type SiteRow = InferEntity<typeof SiteRow>;

/**
 * An immutable upload of a site: validating while it streams in, then ready or failed for good; deleted once
 * removed (its file rows go, its blobs are swept). `files`, `bytes`: what it keeps (decompressed); `digest`: the
 * SHA-256 of its manifest; `error`: a failed deploy's first reason.
 */
export const DeployRow = defineEntity({
  name: "DeployRow",
  tableName: "deploys",
  indexes: [
    { name: "deploys_by_site", properties: ["siteId", "id"] },
    { name: "deploys_by_project", properties: ["projectId"] },
  ],
  checks: [{ name: "deploys_state_check", expression: "state in ('validating', 'ready', 'failed', 'deleted')" }],
  properties: {
    id: p.text().primary(),
    siteId: p.text(),
    projectId: p.text(),
    state: p.text(),
    files: p.integer().default(0),
    bytes: p.bigint("number"),
    digest: p.text().default(""),
    createdBy: p.text(),
    createdAt: p.datetime(),
    validatedAt: p.datetime().nullable(),
    error: p.text().default(""),
  },
});
export type DeployRow = InferEntity<typeof DeployRow>;

/**
 * One file of a deploy's manifest: its path in the site (NFC, as served), the SHA-256 of its bytes (the blob's key),
 * size and content type. `encodings`: precompressed copies kept beside it, by coding (`{"br": {"digest", "size"}}`).
 */
export const DeployFileRow = defineEntity({
  name: "DeployFileRow",
  tableName: "deploy_files",
  indexes: [{ name: "deploy_files_by_digest", properties: ["digest"] }],
  properties: {
    deployId: p.text().primary(),
    path: p.text().primary(),
    digest: p.text(),
    size: p.bigint("number"),
    contentType: p.text(),
    encodings: p.json<Record<string, { digest: string; size: number }>>().default("{}"),
  },
});
export type DeployFileRow = InferEntity<typeof DeployFileRow>;

/** One line of a deploy's upload log, in order (`seq` from 1). */
export const DeployLogRow = defineEntity({
  name: "DeployLogRow",
  tableName: "deploy_log",
  checks: [{ name: "deploy_log_level_check", expression: "level in ('info', 'error')" }],
  properties: {
    deployId: p.text().primary(),
    seq: p.integer().primary(),
    level: p.text(),
    path: p.text().default(""),
    rule: p.text().default(""),
    message: p.text(),
  },
});
export type DeployLogRow = InferEntity<typeof DeployLogRow>;

/**
 * A blob of the store (content-addressed by SHA-256), recorded before its bytes are put so that the sweep finds
 * what a crash left: a blob no deploy file (nor encoding) names, older than the sweep's grace, is deleted.
 */
export const BlobRow = defineEntity({
  name: "BlobRow",
  tableName: "blobs",
  properties: {
    digest: p.text().primary(),
    size: p.bigint("number"),
    createdAt: p.datetime(),
  },
});
export type BlobRow = InferEntity<typeof BlobRow>;

/**
 * A custom domain of a site: pending until its TXT record (_pf-verify.<hostname> = pf-verify=<token>) is found,
 * then verified and served. A verified hostname belongs to one site platform-wide.
 */
export const DomainRow = defineEntity({
  name: "DomainRow",
  tableName: "domains",
  indexes: [{ name: "domains_by_site", properties: ["siteId", "id"] }],
  uniques: [
    { name: "domains_site_hostname_unique", properties: ["siteId", "hostname"] },
    // One site per verified domain, platform-wide: no takeover of a domain another tenant verified.
    { name: "domains_verified_hostname", properties: ["hostname"], where: "status = 'verified'" },
  ],
  checks: [{ name: "domains_status_check", expression: "status in ('pending', 'verified')" }],
  properties: {
    id: p.text().primary(),
    siteId: p.text(),
    projectId: p.text(),
    hostname: p.text(),
    token: p.text(),
    status: p.text(),
    createdAt: p.datetime(),
    verifiedAt: p.datetime().nullable(),
    checkedAt: p.datetime().nullable(),
    lastError: p.text().default(""),
    /** Re-checks in a row that found a verified domain's TXT record gone (the reverify worker unverifies at 3). */
    missedChecks: p.integer().default(0),
  },
});
export type DomainRow = InferEntity<typeof DomainRow>;

export const entities = [ProjectRow, MemberRow, SiteRow, DeployRow, DeployFileRow, DeployLogRow, BlobRow, DomainRow];
