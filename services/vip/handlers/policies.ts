import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { CheckMode } from "../../../gen/pf/vip/v1/memberships_pb.js";
import {
  EvaluateReason,
  PolicyEvaluateResultSchema,
  PolicyListSchema,
  PolicyResultSchema,
  PolicyRule,
  ResourcePolicySchema,
  type PolicySetRequest,
} from "../../../gen/pf/vip/v1/policies_pb.js";
import type { EntityRef } from "../../../gen/pf/v1/refs_pb.js";
import type { VipService } from "../../../gen/pf/vip/v1/vip_pb.js";
import { actingPerson, callerOf } from "../../kit/auth/principal.js";
import { advisoryLock } from "../../kit/db/advisory-lock.js";
import { newId } from "../../kit/handler/ids.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { answerStatus } from "../../kit/handler/status.js";
import { requireSubject } from "../../kit/handler/subjects.js";
import type { VipContext } from "../context.js";
import type { PolicyRow } from "../db/entities.js";
import { perkById } from "../db/perks.js";
import { planById } from "../db/plans.js";
import { hotPlanRows } from "../db/plan-reads.js";
import {
  changePolicy,
  deletePolicy,
  insertPolicy,
  policyById,
  policiesPage,
  policyFor,
  readPolicyOf,
} from "../db/policies.js";
import { entitlementFor } from "../db/projection.js";
import { NETWORK, requireOwner, requireSelfOrGrant, viewerOf, type Viewer } from "../domain/access.js";
import { evaluate, type Rule } from "../domain/policies.js";

type PolicyHandlers = Pick<
  ServiceImpl<typeof VipService>,
  "listPolicies" | "setPolicy" | "getPolicy" | "deletePolicy" | "evaluatePolicy"
>;

const RULES: Record<Rule, PolicyRule> = {
  any_member: PolicyRule.ANY_MEMBER,
  plan_member: PolicyRule.PLAN_MEMBER,
  perk_holder: PolicyRule.PERK_HOLDER,
};

const policyToProto = (row: PolicyRow) =>
  create(ResourcePolicySchema, {
    id: row.id,
    creator: row.creator,
    resource: { service: row.resourceService, kind: row.resourceKind, id: row.resourceId },
    rule: RULES[row.rule as Rule],
    planId: row.planId ?? "",
    perkId: row.perkId ?? "",
    alwaysCheckBilling: row.alwaysCheckBilling,
    setBy: row.setBy,
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
  });

const TOKEN = /^[a-z][a-z0-9_.-]{0,39}$/;

/** A resource named as a gated object (the contract requires one; pf.v1.EntityRef is every service's and declares no rules). */
function requireResource(field: string, ref: EntityRef): EntityRef {
  if (!TOKEN.test(ref.service)) throw invalid(`${field}.service`, "service is the owning service's key");
  if (!TOKEN.test(ref.kind)) throw invalid(`${field}.kind`, "kind is the object's kind within its service");
  if (ref.id === "") throw invalid(`${field}.id`, "id is the object's id");
  return ref;
}

/** Who manages a creator's policies: the creator, or the grant (staff, first-party services acting for nobody); the network's: the grant only. */
function managesPolicies({ grant, person }: Viewer, creator: string): boolean {
  return grant || person === creator;
}

/** The rule sent (the contract requires one PolicyRule defines), with the plan or perk it names and no other. */
function ruleOf(request: PolicySetRequest): Rule {
  const rule = (Object.keys(RULES) as Rule[]).find((name) => RULES[name] === request.rule)!;
  if (rule === "plan_member" && request.planId === "") throw invalid("plan_id", "A plan rule names its plan_id");
  if (rule !== "plan_member" && request.planId !== "") throw invalid("plan_id", "plan_id belongs to a plan rule only");
  if (rule === "perk_holder" && request.perkId === "") throw invalid("perk_id", "A perk rule names its perk_id");
  if (rule !== "perk_holder" && request.perkId !== "") throw invalid("perk_id", "perk_id belongs to a perk rule only");
  return rule;
}

/** The rule's plan must be the creator's, its perk the creator's or the network's (for the network: the network's; 422 naming the field otherwise). */
async function checkTarget(em: EntityManager, creator: string, rule: Rule, request: PolicySetRequest): Promise<void> {
  if (rule === "plan_member" && (await planById(em, request.planId))?.owner !== creator) {
    throw problem(422, "request.invalid", "plan_id names no plan of this creator", { field: "plan_id" });
  }
  const perk = rule === "perk_holder" ? await perkById(em, request.perkId) : undefined;
  if (rule === "perk_holder" && perk?.owner !== creator && perk?.owner !== NETWORK) {
    throw problem(422, "request.invalid", "perk_id names no perk of this creator or the network", { field: "perk_id" });
  }
}

/**
 * The resource's owner, confirmed with the service holding it (outside any
 * transaction): 422 naming the field when no service by that key has
 * resources to gate, or it holds no such object.
 */
async function ownerOf(ctx: VipContext, resource: EntityRef): Promise<string> {
  const resolve = ctx.owners.get(resource.service);
  if (!resolve) {
    const gated = [...ctx.owners.keys()].join(", ");
    throw problem(422, "request.invalid", `resource.service names no service whose resources can be gated (${gated})`, {
      field: "resource.service",
    });
  }
  const owner = await resolve(resource.kind, resource.id);
  if (owner === "") {
    throw problem(422, "request.invalid", `resource.id names no ${resource.kind} of ${resource.service}`, {
      field: "resource.id",
    });
  }
  return owner;
}

/** Resource policies: one rule per resource, set and removed by its creator (staff for the network's); evaluation never lets unknown through. */
export function policyHandlers(ctx: VipContext): PolicyHandlers {
  const notFound = () => problem(404, "policy.not_found", "There is no such policy.");
  const notOwner = () => problem(403, "vip.not_owner", "Creators set rules for their own resources only.");
  const answer = (row: PolicyRow) =>
    create(PolicyResultSchema, { result: { case: "policy", value: policyToProto(row) } });

  return {
    async listPolicies(request, call) {
      const creator = request.creator === "" ? undefined : requireOwner("creator", request.creator);
      // The grant lists any creator's (all without a filter); a person their own.
      const owner = viewerOf(callerOf(call)).grant ? creator : actingPerson(call);
      if (creator !== undefined && creator !== owner)
        throw problem(403, "vip.forbidden", "People list their own policies only.");
      const limit = pageLimit(request.limit);
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const rows = await policiesPage(
        ctx.orm.em.fork(),
        {
          creator: owner,
          resourceService: request.resourceService,
          before: typeof before === "string" ? before : undefined,
        },
        limit,
      );
      const { items, nextCursor } = page(rows, limit, (row) => [row.id]);
      return create(PolicyResultSchema, {
        result: {
          case: "policies",
          value: create(PolicyListSchema, { policies: items.map(policyToProto), nextCursor }),
        },
      });
    },

    async setPolicy(request, call) {
      const caller = callerOf(call);
      const creator = request.creator === "" ? caller.person : requireOwner("creator", request.creator);
      if (creator !== NETWORK && !creator?.startsWith("usr_"))
        throw invalid("creator", "creator is the creator (usr_) whose members the rule admits, or network");
      // The network's rules are staff's, as its plans are: the grant manages them, no person is the network.
      if (!managesPolicies(viewerOf(caller), creator)) throw notOwner();
      const resource = requireResource("resource", request.resource!);
      const rule = ruleOf(request);
      // Writing a rule never makes anyone the owner: the service holding the resource says who is, staff included.
      if ((await ownerOf(ctx, resource)) !== creator) throw notOwner();
      const setBy = caller.person ?? caller.principal.sub;
      const { row, created } = await ctx.transaction(async (em) => {
        await checkTarget(em, creator, rule, request);
        await advisoryLock(em, `vip.policy:${resource.service}/${resource.kind}/${resource.id}`);
        const at = ctx.clock.now();
        let existing = await policyFor(em, resource);
        // Another creator's rule here predates the owner check (or the resource changed hands): the owner's replaces it.
        if (existing && existing.creator !== creator) {
          await deletePolicy(em, existing);
          existing = null;
        }
        const fields = {
          rule,
          planId: request.planId || null,
          perkId: request.perkId || null,
          alwaysCheckBilling: request.alwaysCheckBilling,
          setBy,
          updatedAt: at,
        };
        const written = existing
          ? await changePolicy(em, existing, fields)
          : await insertPolicy(em, {
              id: newId("pol"),
              creator,
              resourceService: resource.service,
              resourceKind: resource.kind,
              resourceId: resource.id,
              createdAt: at,
              ...fields,
            });
        return { row: written, created: !existing };
      });
      if (!created) answerStatus(call, 200);
      return answer(row);
    },

    async getPolicy(request, call) {
      const row = await policyById(ctx.orm.em.fork(), request.id);
      if (!row || !managesPolicies(viewerOf(callerOf(call)), row.creator)) throw notFound();
      return answer(row);
    },

    async deletePolicy(request, call) {
      return ctx.transaction(async (em) => {
        const row = await policyById(em, request.id);
        if (!row || !managesPolicies(viewerOf(callerOf(call)), row.creator)) throw notFound();
        await deletePolicy(em, row);
        return answer(row);
      });
    },

    async evaluatePolicy(request, call) {
      const subject = requireSubject("subject", request.subject);
      const resource = requireResource("resource", request.resource!);
      // Other services evaluate on every gated request: hot reads only (db/policies.ts, db/plan-reads.ts).
      const policy = await readPolicyOf(ctx, resource);
      requireSelfOrGrant(callerOf(call), [subject, ...(policy ? [policy.creator] : [])], "the subject or the creator");
      if (!policy) return create(PolicyEvaluateResultSchema, { allowed: true, reason: EvaluateReason.NO_POLICY });
      const mode = policy.alwaysCheckBilling ? CheckMode.AUTHORITATIVE : CheckMode.AUTO;
      const { result, fact } =
        subject === policy.creator
          ? { result: undefined, fact: undefined }
          : await entitlementFor(ctx, subject, policy.creator, mode);
      const [publication] =
        fact && fact.planId
          ? await hotPlanRows(ctx).publications([{ planId: fact.planId, version: fact.planVersion }])
          : [];
      const held = fact ? { planId: fact.planId, perkIds: publication?.perks.map((perk) => perk.id) ?? [] } : undefined;
      const verdict = result
        ? evaluate(
            {
              creator: policy.creator,
              rule: policy.rule as Rule,
              planId: policy.planId ?? null,
              perkId: policy.perkId ?? null,
            },
            subject,
            { status: result.status, member: result.member },
            held,
          )
        : { allowed: true, reason: EvaluateReason.OWNER };
      return create(PolicyEvaluateResultSchema, { ...verdict, policy: policyToProto(policy), entitlement: result });
    },
  };
}
