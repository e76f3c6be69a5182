import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { UniqueConstraintViolationException } from "@mikro-orm/postgresql";
import { randomBytes } from "node:crypto";
import type { HostService } from "../../../gen/pf/host/v1/host_pb.js";
import { DomainManageResultSchema, type Domain } from "../../../gen/pf/host/v1/domains_pb.js";
import { relatedActor } from "../../kit/auth/principal.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import { answerStatus } from "../../kit/handler/status.js";
import type { HostContext } from "../context.js";
import {
  domainById,
  domainSite,
  domainsOfSite,
  domainToProto,
  insertDomain,
  removeDomain,
  saveDomains,
  siteDomainNamed,
  verifiedElsewhere,
} from "../db/domains.js";
import type { DomainRow } from "../db/entities.js";
import { customHostname } from "../domain/hostnames.js";
import { lookUpVerification } from "../dns.js";
import { hostSubjects, recordHostEvent } from "../events.js";

type Handlers = Pick<
  ServiceImpl<typeof HostService>,
  "addDomain" | "listDomains" | "getDomain" | "verifyDomain" | "deleteDomain"
>;

/** What a verification check answers, or the name another site verified first (409 once the check is written). */
type Checked = { domain: Domain; changed: boolean } | { taken: string };

const taken = (hostname: string) =>
  problem(409, "host.domain_taken", `${hostname} is verified by another site: it serves there until removed.`);

/**
 * Custom domains: add, list, read, verify, remove. A domain is pending until its TXT record is found, then verified
 * and served; a verified name belongs to one site platform-wide (the partial unique index domains_verified_hostname).
 */
export function domainHandlers(ctx: HostContext): Handlers {
  const answered = (row: DomainRow, slug: string) => domainToProto(row, slug, ctx.settings);

  return {
    async addDomain(request, call) {
      const verdict = customHostname(request.hostname, ctx.settings.platformDomains);
      if (verdict.refused !== undefined)
        throw problem(403, "host.domain_refused", `${request.hostname.trim()}: ${verdict.refused}.`);
      const { hostname } = verdict;
      const add = () =>
        ctx.transaction(async (em) => {
          const site = await domainSite(em, request.id);
          if (site.environment === "sandbox")
            throw problem(403, "host.domain_refused", "A sandbox project cannot have custom domains.");
          const existing = await siteDomainNamed(em, site.id, hostname);
          if (existing?.status !== "verified" && (await verifiedElsewhere(em, hostname, site.id)))
            throw taken(hostname);
          if (existing) return { domain: answered(existing, site.slug), changed: false };
          const row = await insertDomain(em, {
            id: newId("dom"),
            siteId: site.id,
            projectId: site.projectId,
            hostname,
            // 128 random bits: what only this domain's owner is told to publish.
            token: randomBytes(16).toString("hex"),
            status: "pending",
            createdAt: ctx.clock.now(),
            verifiedAt: null,
            checkedAt: null,
            lastError: "",
            missedChecks: 0,
          });
          return { domain: answered(row, site.slug), changed: true };
        });
      // Two adds of one name to one site at once: the loser finds the winner's row.
      const added = await add().catch((error: unknown) => {
        if (error instanceof UniqueConstraintViolationException) return add();
        throw error;
      });
      if (!added.changed) answerStatus(call, 200);
      return create(DomainManageResultSchema, added);
    },

    async listDomains(request) {
      const em = ctx.orm.em.fork();
      const site = await domainSite(em, request.id);
      const rows = await domainsOfSite(em, site.id);
      return create(DomainManageResultSchema, { domains: rows.map((row) => answered(row, site.slug)) });
    },

    async getDomain(request) {
      const em = ctx.orm.em.fork();
      const row = await domainById(em, request.id);
      const site = await domainSite(em, row.siteId);
      return create(DomainManageResultSchema, { domain: answered(row, site.slug) });
    },

    async verifyDomain(request, call) {
      const actor = relatedActor(call);
      const asked = await domainById(ctx.orm.em.fork(), request.id);
      // The lookup may take PF_HOST_DNS_TIMEOUT_MS: outside any transaction, then one short write.
      const lookup = await lookUpVerification(ctx.settings, asked.hostname, asked.token);
      const outcome = await ctx
        .transaction(async (em): Promise<Checked> => {
          const row = await domainById(em, request.id, true);
          const site = await domainSite(em, row.siteId);
          const at = ctx.clock.now();
          row.checkedAt = at;
          if (!lookup.found) {
            row.lastError = lookup.reason;
            await saveDomains(em);
            return { domain: answered(row, site.slug), changed: false };
          }
          // Kept with the reason, and answered 409 once written.
          if (row.status === "pending" && (await verifiedElsewhere(em, row.hostname, row.siteId))) {
            row.lastError = `another site verified ${row.hostname} first`;
            await saveDomains(em);
            return { taken: row.hostname };
          }
          const changed = row.status === "pending";
          row.status = "verified";
          row.verifiedAt ??= at;
          row.lastError = "";
          row.missedChecks = 0;
          await saveDomains(em);
          if (changed)
            await recordHostEvent(em, hostSubjects.domainVerified, {
              projectId: row.projectId,
              siteId: row.siteId,
              hostname: row.hostname,
              actor,
              at,
            });
          return { domain: answered(row, site.slug), changed };
        })
        .catch((error: unknown): Checked => {
          // Another site's verification of the same name committed between our check and our write.
          if (error instanceof UniqueConstraintViolationException) return { taken: asked.hostname };
          throw error;
        });
      if ("taken" in outcome) throw taken(outcome.taken);
      return create(DomainManageResultSchema, outcome);
    },

    async deleteDomain(request, call) {
      const actor = relatedActor(call);
      return ctx.transaction(async (em) => {
        const row = await domainById(em, request.id, true);
        const site = await domainSite(em, row.siteId);
        // Kept for review with the rest of the site: no moving a taken-down site's domain elsewhere.
        if (site.takenDown)
          throw problem(409, "host.under_review", "The site is taken down: its domains stay until it is restored.");
        const domain = answered(row, site.slug);
        await removeDomain(em, row);
        await recordHostEvent(em, hostSubjects.domainRemoved, {
          projectId: row.projectId,
          siteId: row.siteId,
          hostname: row.hostname,
          actor,
          at: ctx.clock.now(),
        });
        return create(DomainManageResultSchema, { domain, changed: true });
      });
    },
  };
}
