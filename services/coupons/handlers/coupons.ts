import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { UniqueConstraintViolationException, type EntityManager } from "@mikro-orm/postgresql";
import {
  CouponStatus,
  StatusResultSchema,
  SubmitResultSchema,
  type CouponsService,
  type SubmitRequest,
} from "../../../gen/pf/coupons/v1/coupons_pb.js";
import { actingPerson, callerOf, staffActor } from "../../kit/auth/principal.js";
import { registrableDomain } from "../../kit/handler/public-suffix.js";
import { maxLength } from "../../kit/handler/text.js";
import { requireUrl } from "../../kit/handler/urls.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { rateLimit } from "../../kit/writes/rate-limit.js";
import {
  changeCoupon,
  couponAnswer,
  couponOfMerchant,
  insertCoupon,
  lockCoupon,
  reportsOf,
  STATUS_TO_PROTO,
  statusOf,
} from "../db/coupons.js";
import { newRule, siteRuleTaken } from "../db/domain-rules.js";
import { lockCode, lockSite } from "../db/locks.js";
import {
  merchantAnswer,
  merchantCovering,
  merchantNotFound,
  merchantRow,
  newMerchant,
  shareMerchant,
} from "../db/merchants.js";
import { codeKeyOf, lookedUp, normalizedCode } from "../domain/codes.js";
import { normalizeHost } from "../domain/hosts.js";
import { codePublished, codeStatusChanged, codeSubmitted, merchantChanged, subjects } from "../events.js";
import { submitRule } from "../settings.js";
import { codeNotFound } from "./lookups.js";
import { couponDocuments } from "../db/search.js";
import { refreshSearchDocuments } from "../../kit/search-documents/record.js";

type CouponHandlers = Pick<ServiceImpl<typeof CouponsService>, "submitCoupon" | "updateCouponStatus">;

/** What moderation may ask for; the reported_* statuses follow from reports and are never set. */
const MODERATION = {
  [CouponStatus.DISABLED]: "disabled",
  [CouponStatus.EXPIRED]: "expired",
  [CouponStatus.ACTIVE]: "",
} as const;

/** The SubmitCoupon rule that admits AI output from a service acting for nobody (coupons.proto). */
const AI_OUTPUT = "ai_output";

/** Which site a submission names: a merchant id, or a host with the page path when a URL was given. */
type Named = { merchantId: string } | { host: string; path: string | undefined; field: "host" | "url" };

function namedMerchant(request: SubmitRequest): Named {
  const { merchant } = request;
  switch (merchant.case) {
    case "merchantId":
      return { merchantId: merchant.value };
    case "host": {
      const host = normalizeHost(merchant.value);
      if (host === undefined) throw invalid("host", "host must be a hostname such as shop.example.com.");
      return { host, path: undefined, field: "host" };
    }
    case "url": {
      const url = requireUrl("url", merchant.value, ["http", "https"]);
      const host = normalizeHost(url.hostname);
      if (host === undefined) throw invalid("url", "url must be an http or https address of the merchant's site.");
      return { host, path: url.pathname, field: "url" };
    }
    default:
      throw invalid("merchant_id", "Name the merchant by merchant_id, host or url.");
  }
}

/** Text fields of a submission: trimmed, bounded, and a code that is one printable token (NFKC: domain/codes.ts). */
function submittedText(request: SubmitRequest) {
  const code = maxLength("code", normalizedCode(request.code).trim(), 64);
  if (code === "" || /[\s\p{C}]/u.test(code))
    throw invalid("code", "code is required: the coupon code, without spaces.");
  return {
    code,
    description: maxLength("description", request.description.trim(), 500),
    restrictions: maxLength("restrictions", request.restrictions.trim(), 500),
    evidence: maxLength("evidence", request.evidence.trim(), 1000),
  };
}

/**
 * A unique violation left after the locks (a rule a manager added outside
 * them, say) is a conflict, never a 500: the code's own index is
 * coupons.code.duplicate, a site rule coupons.domain.taken.
 */
function submitConflict(error: UniqueConstraintViolationException) {
  const constraint = (error as { constraint?: string }).constraint ?? "";
  if (constraint.startsWith("domain_rules")) {
    return problem(409, "coupons.domain.taken", "Another merchant just took this site; submit the code again.");
  }
  return problem(409, "coupons.code.duplicate", "This merchant was just given this code; look it up again.");
}

/**
 * Submitting codes (for a person, or AI output held for staff review) and
 * moderating them (disable, mark expired, return to active results).
 */
export function couponHandlers(ctx: ServiceContext): CouponHandlers {
  /** The merchant a submission names; a site no merchant covers becomes a pending merchant. */
  const merchantFor = async (em: EntityManager, named: Named, by: string, at: Date) => {
    if ("merchantId" in named) {
      const merchant = await merchantRow(em, named.merchantId);
      if (!merchant) throw merchantNotFound();
      return { merchant, created: false };
    }
    const found = await merchantCovering(em, named.host, named.path);
    if (found) return { merchant: found.merchant, created: false };
    const registrable = registrableDomain(named.host);
    if (registrable === undefined) {
      throw problem(400, "coupons.domain.public_suffix", `${named.host} is a public suffix, not a merchant's site.`, {
        field: named.field,
      });
    }
    // Two submissions for one uncovered site at once: the second waits here for the first's
    // merchant, then finds it (the lock is the one every rule change of this site takes).
    await lockSite(em, registrable);
    const meanwhile = await merchantCovering(em, named.host, named.path);
    if (meanwhile) return { merchant: meanwhile.merchant, created: false };
    // The registrable domain with its subdomains, unless another merchant holds that rule: then this host alone.
    const taken = await siteRuleTaken(em, registrable);
    const domain = taken ? named.host : registrable;
    const merchant = newMerchant(em, {
      name: domain,
      host: domain,
      status: "pending",
      createdBy: by,
      createdAt: at,
      updatedAt: at,
    });
    newRule(em, merchant.id, { domain, pathPrefix: "", includeSubdomains: !taken }, at);
    return { merchant, created: true };
  };

  return {
    async submitCoupon(request, call) {
      // Who submits is settled before what: a caller refused learns nothing about the request.
      const caller = callerOf(call);
      const ai = caller.principal.origin === "ai";
      const submitter = caller.admittedBy === AI_OUTPUT ? caller.principal.sub : actingPerson(call);
      for (const field of ["status", "confidence", "verified"] as const) {
        if (request[field] !== undefined) {
          throw problem(
            400,
            "coupons.field_refused",
            `${field} is never taken from a submission: a code starts as unknown and its status and confidence follow from reports.`,
            { field },
          );
        }
      }
      const named = namedMerchant(request);
      const text = submittedText(request);
      const expiresAt = request.expiresAt ? timestampDate(request.expiresAt) : null;
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        if (expiresAt !== null && expiresAt <= at)
          throw invalid("expires_at", "expires_at is in the past: the code has expired already.");
        await rateLimit(em, [submitRule(submitter)], at);
        const chosen = await merchantFor(em, named, submitter, at);
        const { created } = chosen;
        // A shared lock on an existing merchant, read afresh: an approval running now either sees this code or is seen by it.
        const merchant = created ? chosen.merchant : await shareMerchant(em, chosen.merchant.id);
        if (merchant.status === "disabled")
          throw problem(409, "coupons.merchant.disabled", "This merchant is disabled: it takes no codes.", {
            merchant_id: merchant.id,
          });
        const codeKey = codeKeyOf(text.code);
        // One code per merchant: a second submission of it at once waits here, then finds the first.
        await lockCode(em, merchant.id, codeKey);
        const existing = await couponOfMerchant(em, merchant.id, codeKey);
        // The code's id only when lookups show it: a held, unpublished or disabled code is never named.
        if (existing)
          throw problem(
            409,
            "coupons.code.duplicate",
            "This merchant has this code already.",
            lookedUp(existing, merchant.status) ? { coupon_id: existing.id } : undefined,
          );
        // A person's code of an approved merchant is published at once; AI output waits for staff, and every code for its merchant's approval.
        const published = !ai && merchant.status === "approved";
        const row = await insertCoupon(em, {
          merchantId: merchant.id,
          ...text,
          codeKey,
          expiresAt,
          origin: ai ? "ai" : "person",
          submittedBy: submitter,
          heldForReview: ai,
          publishedAt: published ? at : null,
          moderation: "",
          moderatedBy: "",
          moderationReason: "",
          createdAt: at,
          updatedAt: at,
        }).catch((error: unknown) => {
          throw error instanceof UniqueConstraintViolationException ? submitConflict(error) : error;
        });
        const merchantMessage = await merchantAnswer(em, merchant);
        if (created) await merchantChanged(em, subjects.merchantCreated, merchantMessage, { changedBy: submitter }, at);
        const coupon = await couponAnswer(em, row, at);
        await codeSubmitted(em, coupon, { heldForReview: ai, published }, at);
        if (published) await codePublished(em, coupon, at);
        await refreshSearchDocuments(em, couponDocuments, [row.id], at);
        return create(SubmitResultSchema, {
          coupon,
          merchant: merchantMessage,
          merchantCreated: created,
          heldForReview: ai,
          published,
        });
      });
    },

    async updateCouponStatus(request, call) {
      // Staff only (ACTOR_STAFF): enforcement refused anyone else before the request was read.
      const by = staffActor(call);
      if (request.status === CouponStatus.REPORTED_WORKING || request.status === CouponStatus.REPORTED_FAILED) {
        throw problem(
          400,
          "coupons.status.refused",
          "reported_working and reported_failed follow from reports and time: nobody sets them.",
          { field: "status" },
        );
      }
      const moderation = MODERATION[request.status as keyof typeof MODERATION];
      if (moderation === undefined)
        throw invalid("status", "status is COUPON_STATUS_DISABLED, COUPON_STATUS_EXPIRED or COUPON_STATUS_ACTIVE.");
      const reason = maxLength("reason", request.reason.trim(), 500);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const row = await lockCoupon(em, request.id);
        if (!row) throw codeNotFound();
        const before = statusOf(row, (await reportsOf(em, [row.id])).get(row.id), at).status;
        // Returning a held code to active results is the staff review: it is published once its merchant is approved.
        const reviewed = moderation === "" && row.heldForReview;
        const merchant = (await merchantRow(em, row.merchantId))!;
        const publish = reviewed && merchant.status === "approved";
        await changeCoupon(em, row, {
          moderation,
          moderatedBy: by,
          moderationReason: reason,
          updatedAt: at,
          ...(reviewed ? { heldForReview: false } : {}),
          ...(publish ? { publishedAt: at } : {}),
        });
        const coupon = await couponAnswer(em, row, at);
        if (coupon.status !== STATUS_TO_PROTO[before])
          await codeStatusChanged(em, coupon, { previous: STATUS_TO_PROTO[before], reason, changedBy: by }, at);
        if (publish) await codePublished(em, coupon, at);
        await refreshSearchDocuments(em, couponDocuments, [row.id], at);
        return create(StatusResultSchema, { coupon });
      });
    },
  };
}
