import { leasedJob } from "../../kit/service/lease.js";
import type { HostContext } from "../context.js";
import { domainsDue, findDomain, saveDomains } from "../db/domains.js";
import { lookUpVerification } from "../dns.js";
import { hostSubjects, recordHostEvent } from "../events.js";

/**
 * Re-checks in a row that must find a verified domain's TXT record gone before it is unverified: one missing answer
 * (a zone being edited, a secondary not yet in sync) never unserves a domain.
 */
export const MISSED_CHECKS_TO_UNVERIFY = 3;

/** Domains looked up per batch, and at once within it. */
const BATCH = 50;
const AT_ONCE = 8;

/**
 * Re-checks every verified domain not checked for PF_HOST_REVERIFY_EVERY_MS. Found: the count of misses restarts.
 * Gone (no such name, no TXT, another value): one more miss, and at MISSED_CHECKS_TO_UNVERIFY it is pending again
 * with the reason and `host.domain.removed` tells every instance to stop serving it. No answer (a timeout, a failing
 * server) is recorded but counts for nothing. Answers how many domains were unverified.
 */
export async function reverifyDomains(ctx: HostContext): Promise<number> {
  let unverified = 0;
  // Fixed for the pass: a domain it checked is not due again before the next one.
  const before = new Date(ctx.clock.now().getTime() - ctx.settings.reverifyEveryMs);
  for (;;) {
    const due = await domainsDue(ctx.orm.em.fork(), before, BATCH);
    for (let from = 0; from < due.length; from += AT_ONCE) {
      const lookups = await Promise.all(
        due.slice(from, from + AT_ONCE).map(async (row) => ({
          id: row.id,
          lookup: await lookUpVerification(ctx.settings, row.hostname, row.token),
        })),
      );
      // Outside the lookups, one short transaction per domain.
      for (const { id, lookup } of lookups) if (await recordCheck(ctx, id, lookup)) unverified++;
    }
    if (due.length < BATCH) return unverified;
  }
}

/** Records one re-check of a verified domain; answers whether it unverified it. */
async function recordCheck(
  ctx: HostContext,
  id: string,
  lookup: Awaited<ReturnType<typeof lookUpVerification>>,
): Promise<boolean> {
  return ctx.transaction(async (em) => {
    const row = await findDomain(em, id, true);
    // Removed or unverified while it was looked up.
    if (!row || row.status !== "verified") return false;
    const at = ctx.clock.now();
    row.checkedAt = at;
    row.lastError = lookup.found ? "" : lookup.reason;
    row.missedChecks = lookup.found ? 0 : row.missedChecks + (lookup.gone ? 1 : 0);
    const unverify = row.missedChecks >= MISSED_CHECKS_TO_UNVERIFY;
    if (unverify) {
      row.status = "pending";
      row.verifiedAt = null;
      row.missedChecks = 0;
      row.lastError = `unverified: ${MISSED_CHECKS_TO_UNVERIFY} checks in a row found no record (${row.lastError})`;
    }
    await saveDomains(em);
    if (unverify)
      await recordHostEvent(em, hostSubjects.domainRemoved, {
        projectId: row.projectId,
        siteId: row.siteId,
        hostname: row.hostname,
        actor: "svc:host",
        at,
      });
    return unverify;
  });
}

/**
 * The re-check as a background job, one instance at a time. A pass every tenth of the period (at most every 10
 * minutes) takes the domains that are due, so each is checked about every PF_HOST_REVERIFY_EVERY_MS.
 */
export const reverify = leasedJob<HostContext>(
  "host.reverify",
  (ctx) => {
    const everyMs = Math.min(Math.max(Math.floor(ctx.settings.reverifyEveryMs / 10), 10), 600_000);
    return { everyMs, firstAfterMs: everyMs };
  },
  async (ctx) => {
    await reverifyDomains(ctx);
  },
);
