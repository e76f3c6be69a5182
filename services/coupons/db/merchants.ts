import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  DomainRuleSchema,
  MerchantSchema,
  MerchantStatus,
  type Merchant,
} from "../../../gen/pf/coupons/v1/coupons_pb.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { problem } from "../../kit/handler/problem.js";
import type { MerchantStatus as Status } from "../domain/transitions.js";
import { bestRule, type DomainRule } from "../domain/rules.js";
import { hostChain } from "../domain/hosts.js";
import { DomainRuleRow, MerchantRow } from "./entities.js";

export const MERCHANT_STATUS_TO_PROTO: Record<Status, MerchantStatus> = {
  pending: MerchantStatus.PENDING,
  approved: MerchantStatus.APPROVED,
  disabled: MerchantStatus.DISABLED,
};

export const MERCHANT_STATUS_FROM_PROTO: Partial<Record<MerchantStatus, Status>> = {
  [MerchantStatus.PENDING]: "pending",
  [MerchantStatus.APPROVED]: "approved",
  [MerchantStatus.DISABLED]: "disabled",
};

export const merchantNotFound = () => problem(404, "coupons.merchant.not_found", "There is no such merchant.");

export function ruleToProto(rule: DomainRule) {
  return create(DomainRuleSchema, {
    domain: rule.domain,
    includeSubdomains: rule.includeSubdomains,
    pathPrefix: rule.pathPrefix,
  });
}

/** A merchant with its domain rules (read here unless given). */
export async function merchantAnswer(em: EntityManager, row: MerchantRow, rules?: DomainRuleRow[]): Promise<Merchant> {
  const domains =
    rules ?? (await em.find(DomainRuleRow, { merchantId: row.id }, { orderBy: { domain: "asc", pathPrefix: "asc" } }));
  return merchantToProto(row, domains);
}

/** A merchant as stored: the entity, or a hot read's row. */
export type StoredMerchant = Pick<MerchantRow, "id" | "name" | "host" | "status" | "createdAt" | "updatedAt">;

function merchantToProto(row: StoredMerchant, domains: DomainRule[]): Merchant {
  return create(MerchantSchema, {
    id: row.id,
    name: row.name,
    host: row.host,
    status: MERCHANT_STATUS_TO_PROTO[row.status as Status],
    domains: domains.map(ruleToProto),
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
  });
}

/**
 * The merchant whose rule covers a host (and a page path, when known), with
 * the rule. The most specific rule decides, whatever its merchant's status.
 */
export async function merchantCovering(
  em: EntityManager,
  host: string,
  path: string | undefined,
): Promise<{ merchant: MerchantRow; rule: DomainRuleRow } | undefined> {
  const chain = hostChain(host);
  if (chain.length === 0) return undefined;
  const rule = bestRule(await em.find(DomainRuleRow, { domain: { $in: chain } }), host, path);
  if (!rule) return undefined;
  return { merchant: await em.findOneOrFail(MerchantRow, { id: rule.merchantId }), rule };
}

type MerchantText = Omit<StoredMerchant, "createdAt" | "updatedAt"> & { createdAt: string; updatedAt: string };
type RuleRow = DomainRule & { merchantId: string };

const merchantById = new HotRead<MerchantText, [string]>(
  "merchants.by_id",
  `select id, name, host, status, created_at as "createdAt", updated_at as "updatedAt" from {merchants} where id = $1`,
);

const RULE_COLUMNS = `domain, path_prefix as "pathPrefix", merchant_id as "merchantId", include_subdomains as "includeSubdomains"`;
const rulesOfMerchant = new HotRead<RuleRow, [string]>(
  "domain_rules.by_merchant",
  `select ${RULE_COLUMNS} from {domain_rules} where merchant_id = $1 order by domain asc, path_prefix asc`,
);
const rulesOfDomains = new HotRead<RuleRow, [string[]]>(
  "domain_rules.by_domain",
  `select ${RULE_COLUMNS} from {domain_rules} where domain = any($1)`,
);

/** A merchant read outside any transaction (a hot read), or undefined when there is none. */
export async function readMerchant(ctx: ReadContext, id: string): Promise<StoredMerchant | undefined> {
  const [row] = await merchantById.run(ctx, id);
  return row && { ...row, createdAt: new Date(row.createdAt), updatedAt: new Date(row.updatedAt) };
}

/** `merchantAnswer` as a hot read: the merchant with its domain rules. */
export async function readMerchantAnswer(ctx: ReadContext, row: StoredMerchant): Promise<Merchant> {
  return merchantToProto(row, await rulesOfMerchant.run(ctx, row.id));
}

/** `merchantCovering` of a host (no page path) as a hot read, outside any transaction. */
export async function readMerchantCovering(
  ctx: ReadContext,
  host: string,
): Promise<{ merchant: StoredMerchant; rule: DomainRule } | undefined> {
  const chain = hostChain(host);
  if (chain.length === 0) return undefined;
  const rule = bestRule(await rulesOfDomains.run(ctx, chain), host, undefined);
  if (!rule) return undefined;
  const merchant = await readMerchant(ctx, rule.merchantId);
  // A rule's merchant is always there (merchants are never deleted), as merchantCovering's findOneOrFail assumes.
  if (!merchant) throw new Error(`domain rule ${rule.domain} names no merchant ${rule.merchantId}`);
  return { merchant, rule };
}
