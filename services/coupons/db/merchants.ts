import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  DomainRuleSchema,
  MerchantSchema,
  MerchantStatus,
  type Merchant,
} from "../../../gen/pf/coupons/v1/coupons_pb.js";
import { problem } from "../../kit/handler/problem.js";
import type { MerchantStatus as Status } from "../domain/transitions.js";
import { bestRule } from "../domain/rules.js";
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

export function ruleToProto(rule: DomainRuleRow) {
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
