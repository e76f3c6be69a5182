import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { LockMode, type EntityManager, type RequiredEntityData } from "@mikro-orm/postgresql";
import {
  DomainRuleSchema,
  MerchantSchema,
  MerchantStatus,
  type Merchant,
} from "../../../gen/pf/coupons/v1/coupons_pb.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import type { MerchantStatus as Status } from "../domain/transitions.js";
import { bestRule, type DomainRule } from "../domain/rules.js";
import { hostChain } from "../domain/hosts.js";
import { CouponRow, DomainRuleRow, MerchantRow } from "./entities.js";

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

/** The merchant with this id, if any. */
export function merchantRow(em: EntityManager, id: string): Promise<MerchantRow | null> {
  return em.findOne(MerchantRow, { id });
}

/** A merchant locked for a change, inside the caller's transaction; 404 when missing. */
export async function lockMerchant(em: EntityManager, id: string): Promise<MerchantRow> {
  const merchant = await em.findOne(MerchantRow, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (!merchant) throw merchantNotFound();
  return merchant;
}

/**
 * An existing merchant under a shared lock, read afresh: an approval running
 * now either sees what this transaction adds under it or is seen by it.
 */
export function shareMerchant(em: EntityManager, id: string): Promise<MerchantRow> {
  return em.findOneOrFail(MerchantRow, { id }, { lockMode: LockMode.PESSIMISTIC_READ, refresh: true });
}

/** Whether the merchant with this id is approved. */
export async function merchantApproved(em: EntityManager, id: string): Promise<boolean> {
  return (await em.count(MerchantRow, { id, status: "approved" })) > 0;
}

/** A new merchant under a new id, written with the transaction's next flush (with its rules). */
export function newMerchant(em: EntityManager, merchant: Omit<RequiredEntityData<MerchantRow>, "id">): MerchantRow {
  return em.create(MerchantRow, { ...merchant, id: newId("mer") });
}

/**
 * Writes a locked merchant's new status. Approval publishes the codes people
 * submitted (and staff reviewed) while the merchant waited: answers them.
 */
export async function changeMerchantStatus(
  em: EntityManager,
  merchant: MerchantRow,
  to: Status,
  at: Date,
): Promise<CouponRow[]> {
  Object.assign(merchant, { status: to, updatedAt: at });
  const waiting =
    to === "approved"
      ? await em.find(CouponRow, { merchantId: merchant.id, publishedAt: null, heldForReview: false })
      : [];
  for (const row of waiting) Object.assign(row, { publishedAt: at, updatedAt: at });
  await em.flush();
  return waiting;
}

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
