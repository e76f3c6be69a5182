import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  CouponListSchema,
  LookupResultSchema,
  ResolveResultSchema,
  type CouponsService,
} from "../../../gen/pf/coupons/v1/coupons_pb.js";
import { decodeTextCursor, DEFAULT_LIMIT, page } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { couponToProto, readActiveCoupons, readCoupon, readReports } from "../db/coupons.js";
import {
  merchantNotFound,
  readMerchant,
  readMerchantAnswer,
  readMerchantCovering,
  ruleToProto,
} from "../db/merchants.js";
import { registrableDomain } from "../../kit/handler/public-suffix.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { lookedUp } from "../domain/codes.js";
import { normalizeHost } from "../domain/hosts.js";

type LookupHandlers = Pick<
  ServiceImpl<typeof CouponsService>,
  "getCoupon" | "getMerchant" | "listMerchantCoupons" | "resolveMerchant"
>;

export const codeNotFound = () => problem(404, "coupons.code.not_found", "There is no such coupon code.");

/**
 * Public reads, the same for every caller: a code held for review, disabled,
 * or of a merchant that is not approved, and a merchant that is not approved,
 * are 404 for everyone. The routes declare the rate limit `lookup`: anonymous
 * callers per client address, more tightly than people and apps per token
 * (services are not limited), counted by the kit before these run. Every read
 * here is a hot read (services/kit/db/reads.ts): a lookup writes nothing.
 */
export function lookupHandlers(ctx: ServiceContext): LookupHandlers {
  const approvedMerchant = async (id: string) => {
    const merchant = await readMerchant(ctx, id);
    if (merchant?.status !== "approved") throw merchantNotFound();
    return merchant;
  };

  return {
    async getCoupon(request) {
      const row = await readCoupon(ctx, request.id);
      if (!row || !lookedUp(row, row.merchantStatus)) throw codeNotFound();
      const reports = await readReports(ctx, [row.id]);
      return create(LookupResultSchema, {
        result: { case: "coupon", value: couponToProto(row, reports.get(row.id), ctx.clock.now()) },
      });
    },

    async getMerchant(request) {
      const merchant = await approvedMerchant(request.id);
      return create(LookupResultSchema, {
        result: { case: "merchant", value: await readMerchantAnswer(ctx, merchant) },
      });
    },

    async listMerchantCoupons(request) {
      const limitRows = request.limit ?? DEFAULT_LIMIT; // 1-200, declared
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const merchant = await approvedMerchant(request.id);
      const now = ctx.clock.now();
      const rows = await readActiveCoupons(ctx, merchant.id, now, before, limitRows + 1);
      const { items, nextCursor } = page(rows, limitRows, (row) => [row.id]);
      const reports = await readReports(
        ctx,
        items.map((row) => row.id),
      );
      const coupons = items.map((row) => couponToProto(row, reports.get(row.id), now));
      return create(LookupResultSchema, {
        result: { case: "coupons", value: create(CouponListSchema, { merchantId: merchant.id, coupons, nextCursor }) },
      });
    },

    async resolveMerchant(request) {
      const host = normalizeHost(request.host);
      if (host === undefined) throw invalid("host", "host must be a hostname such as shop.example.com.");
      const registrable = registrableDomain(host);
      const found = registrable === undefined ? undefined : await readMerchantCovering(ctx, host);
      if (!found || found.merchant.status !== "approved") throw merchantNotFound();
      return create(ResolveResultSchema, {
        host,
        registrableDomain: registrable,
        merchant: await readMerchantAnswer(ctx, found.merchant),
        rule: ruleToProto(found.rule),
      });
    },
  };
}
