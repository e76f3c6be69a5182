import { LockMode, UniqueConstraintViolationException, type EntityManager } from "@mikro-orm/postgresql";
import { problem } from "../../kit/handler/problem.js";
import { registrableDomain } from "../../kit/handler/public-suffix.js";
import { ruleKey, type DomainRule } from "../domain/rules.js";
import { DomainRuleRow } from "./entities.js";
import { lockSite } from "./locks.js";

/** A new rule of a merchant, written with the transaction's next flush. */
export function newRule(em: EntityManager, merchantId: string, rule: DomainRule, at: Date): DomainRuleRow {
  return em.create(DomainRuleRow, { ...rule, merchantId, createdAt: at });
}

/** Whether any merchant holds the whole-site rule of a domain. */
export async function siteRuleTaken(em: EntityManager, domain: string): Promise<boolean> {
  return (await em.count(DomainRuleRow, { domain, pathPrefix: "" })) > 0;
}

/** Adds rules to a merchant: a rule another merchant holds is 409 coupons.domain.taken; its own is updated. */
export async function addRules(em: EntityManager, merchantId: string, rules: DomainRule[], at: Date): Promise<void> {
  // Claims of one site wait for each other (in one order, so two requests never deadlock): the second sees the first's rule.
  const sites = [...new Set(rules.map((rule) => registrableDomain(rule.domain) ?? rule.domain))].sort();
  for (const site of sites) await lockSite(em, site);
  for (const rule of rules) {
    const held = await em.findOne(
      DomainRuleRow,
      { domain: rule.domain, pathPrefix: rule.pathPrefix },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (held && held.merchantId !== merchantId) {
      throw problem(409, "coupons.domain.taken", `Another merchant holds the rule ${ruleKey(rule)}.`, {
        domain: rule.domain,
        path_prefix: rule.pathPrefix,
        merchant_id: held.merchantId,
      });
    }
    if (held) held.includeSubdomains = rule.includeSubdomains;
    else newRule(em, merchantId, rule, at);
  }
  await em.flush().catch((error: unknown) => {
    throw error instanceof UniqueConstraintViolationException
      ? problem(409, "coupons.domain.taken", "Another merchant just took one of these rules.")
      : error;
  });
}

/** Removes a merchant's rule; answers whether it had one. */
export async function removeRule(em: EntityManager, merchantId: string, rule: DomainRule): Promise<boolean> {
  return (await em.nativeDelete(DomainRuleRow, { domain: rule.domain, pathPrefix: rule.pathPrefix, merchantId })) > 0;
}
