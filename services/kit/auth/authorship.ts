import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import {
  type Approval,
  ApprovalSchema,
  ApprovalVerdict,
  type Authorship,
  AuthorshipSchema,
} from "../../../gen/pf/v1/authorship_pb.js";
import { callerOf, personOf } from "./principal.js";
import { invalid, problem } from "../handler/problem.js";

/**
 * Who authored content (analysis K5). `X-PF-Origin: ai` always makes it `ai`;
 * the person a service named beside it is kept as `requestedBy`, for the
 * audit only: never the author, never shown.
 */
export type Author =
  | { kind: "person"; person: string }
  | { kind: "ai"; workflow: string; runId: string; stubProvider: boolean; service: string; requestedBy?: string }
  | { kind: "system"; service: string };

/** What an AI caller states about its run, as the route's request carries it. */
export interface AiClaim {
  workflow: string;
  runId: string;
  stubProvider?: boolean;
}

/** What a route demands of AI output: its workflow's exact name, and the problem refusing anything else. */
export interface AiRule {
  workflow: string;
  /** The 422 code (`context.workflow_required`). */
  code: string;
  /** The request's field names, for the 400 refusing a workflow from a caller that is not AI. */
  fields?: { workflow: string; runId: string; stubProvider: string };
}

const RUN_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * The author of what this call sends. AI output (origin ai) must name the
 * rule's workflow exactly and a run id (422 with the rule's code); anyone else
 * naming a workflow or run is 400, so no person or service can label its text
 * as AI output, nor AI output pass as a person's.
 */
export function authorOf(call: HandlerContext, claim: AiClaim, rule: AiRule): Author {
  const { principal, person } = callerOf(call);
  if (principal.origin === "ai") {
    if (claim.workflow !== rule.workflow || !RUN_ID.test(claim.runId))
      throw problem(
        422,
        rule.code,
        `AI output must name the workflow ${rule.workflow} and its run id (1 to 128 visible characters).`,
        { workflow: rule.workflow },
      );
    const requestedBy = principal.actingSubject;
    return {
      kind: "ai",
      workflow: claim.workflow,
      runId: claim.runId,
      stubProvider: claim.stubProvider === true,
      service: principal.sub,
      ...(requestedBy ? { requestedBy } : {}),
    };
  }
  const fields = rule.fields ?? { workflow: "workflow", runId: "run_id", stubProvider: "stub_provider" };
  if (claim.workflow !== "") throw invalid(fields.workflow, "Only AI output (X-PF-Origin: ai) names a workflow.");
  if (claim.runId !== "") throw invalid(fields.runId, "Only AI output (X-PF-Origin: ai) names a run.");
  if (claim.stubProvider) throw invalid(fields.stubProvider, "Only AI output (X-PF-Origin: ai) names a stub provider.");
  const who = person ?? personOf(principal);
  return who !== undefined ? { kind: "person", person: who } : { kind: "system", service: principal.sub };
}

/**
 * The person approving (or rejecting) content awaiting review: only a person
 * (usr_) approves, with their own token or named by a service; never AI output
 * (origin ai), a guest, or a service acting as itself (403 auth.person_required,
 * auth.member_required). A service's editor list is checked beside it
 * (`requireEditor(…, { person: true })`).
 */
export function approverOf(call: HandlerContext): string {
  const { principal, person } = callerOf(call);
  if (principal.origin === "ai") throw problem(403, "auth.person_required", "AI output never approves; a person must.");
  const who = person ?? personOf(principal);
  if (who === undefined) throw problem(403, "auth.person_required", "A person must approve; a service alone cannot.");
  if (!who.startsWith("usr_")) throw problem(403, "auth.member_required", "A guest cannot approve.");
  return who;
}

/** An author as the shared message. */
export function authorshipToProto(author: Author): Authorship {
  switch (author.kind) {
    case "person":
      return create(AuthorshipSchema, { author: { case: "person", value: author.person } });
    case "ai": {
      const { workflow, runId, stubProvider, service } = author;
      return create(AuthorshipSchema, { author: { case: "ai", value: { workflow, runId, stubProvider, service } } });
    }
    case "system":
      return create(AuthorshipSchema, { author: { case: "system", value: { service: author.service } } });
  }
}

/** A decision as the shared message. */
export function approvalToProto(decision: { approver: string; at: Date; approved: boolean; note?: string }): Approval {
  return create(ApprovalSchema, {
    approver: decision.approver,
    at: timestampFromDate(decision.at),
    verdict: decision.approved ? ApprovalVerdict.APPROVED : ApprovalVerdict.REJECTED,
    note: decision.note ?? "",
  });
}

/**
 * How a service stores an author: one column per part (`author_kind`, `author`, `workflow`, …), the entity
 * properties of `kit/db/author-columns.ts`.
 */
export interface AuthorColumns {
  authorKind: "person" | "ai" | "system";
  /** The person, or the service that sent it. */
  author: string;
  workflow?: string | null;
  runId?: string | null;
  stubProvider: boolean;
  requestedBy?: string | null;
}

/** An author as columns, the parts it lacks null. */
export function authorColumns(author: Author): Required<AuthorColumns> {
  const none = { workflow: null, runId: null, stubProvider: false, requestedBy: null };
  switch (author.kind) {
    case "person":
      return { authorKind: "person", author: author.person, ...none };
    case "system":
      return { authorKind: "system", author: author.service, ...none };
    case "ai":
      return {
        authorKind: "ai",
        author: author.service,
        workflow: author.workflow,
        runId: author.runId,
        stubProvider: author.stubProvider,
        requestedBy: author.requestedBy ?? null,
      };
  }
}

/** Columns back as an author. */
export function authorFromColumns(columns: AuthorColumns): Author {
  switch (columns.authorKind) {
    case "person":
      return { kind: "person", person: columns.author };
    case "system":
      return { kind: "system", service: columns.author };
    case "ai":
      return {
        kind: "ai",
        workflow: columns.workflow ?? "",
        runId: columns.runId ?? "",
        stubProvider: columns.stubProvider,
        service: columns.author,
        ...(columns.requestedBy ? { requestedBy: columns.requestedBy } : {}),
      };
  }
}
