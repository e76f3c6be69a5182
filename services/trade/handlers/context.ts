import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  type ContextDecision,
  type ContextDraft,
  type ContextProposal,
  ContextProposalResultSchema,
  ContextReadResultSchema,
  type MarketContextService,
} from "../../../gen/pf/trade/v1/context_pb.js";
import { principalOf, relatedActor } from "../../kit/auth/principal.js";
import { type AiRule, approverOf, authorOf } from "../../kit/auth/authorship.js";
import { verifiedAuthor } from "../../kit/auth/ai-runs.js";
import { type Idempotency, idempotencyOf } from "../../kit/writes/idempotency.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { rateLimit } from "../../kit/writes/rate-limit.js";
import { answerStatus } from "../../kit/handler/status.js";
import { contextProposed, contextPublished } from "../events.js";
import type { TradeContext } from "../context.js";
import {
  contextRevisions,
  decide,
  insertDraft,
  publish,
  revisionAnswers,
  revisionForDecision,
  sourceToProto,
} from "../db/context.js";
import { inputById, storeInput } from "../db/context-input.js";
import { readPublishedContext } from "../db/context-read.js";
import { instrumentBySymbol } from "../db/instruments.js";
import { checkCitations } from "../domain/citations.js";
import { recommendationIn } from "../domain/recommendations.js";
import { requireSymbol } from "../domain/symbols.js";

/** The AI workflow that summarises market context: the only one whose output this route takes. */
export const CONTEXT_WORKFLOW = "trade.summarize_market_context";

const AI_RULE: AiRule = {
  workflow: CONTEXT_WORKFLOW,
  code: "context.workflow_required",
  fields: { workflow: "propose.workflow", runId: "propose.run_id", stubProvider: "propose.stub_provider" },
};
/** Proposals per instrument per hour (designed: the spec gives no number). */
const PROPOSALS_PER_HOUR = 30;

/**
 * Market context (analysis C.1): reading the published context (and, for
 * editors and services, the drafts), the workflow's numbered input, and the
 * proposal route carrying propose, approve, reject and publish.
 */
export function contextHandlers(ctx: TradeContext): ServiceImpl<typeof MarketContextService> {
  const instrumentOf = async (em: EntityManager, symbol: string) => {
    const instrument = await instrumentBySymbol(em, symbol);
    if (!instrument) throw instrumentNotFound(symbol);
    return instrument;
  };

  /** Proposes text: authored by AI (origin ai, its run verified) or by the caller, checked, stored as a draft. */
  const propose = async (call: HandlerContext, symbol: string, draft: ContextDraft, once: Idempotency) => {
    const claim = { workflow: draft.workflow, runId: draft.runId, stubProvider: draft.stubProvider };
    const claimed = authorOf(call, claim, AI_RULE);
    const text = draft.text.trim();
    const phrase = recommendationIn(text);
    if (phrase !== undefined)
      throw problem(
        422,
        "context.recommendation_refused",
        `The text reads as a recommendation to trade ("${phrase}"): context describes, it never advises.`,
        { phrase },
      );
    const author = await verifiedAuthor(ctx.ai, claimed, AI_RULE);
    return ctx.transaction((em) =>
      once.run(em, async () => {
        const at = ctx.clock.now();
        const instrument = await instrumentOf(em, symbol);
        const stored = await inputById(em, draft.inputId);
        if (!stored || stored.input.instrumentId !== instrument.id)
          throw problem(422, "context.citation_invalid", `${draft.inputId} is no input of ${symbol}.`, {
            input_id: draft.inputId,
          });
        const citations = checkCitations(draft.citations, text, stored.sources.length);
        const limit = {
          name: "trade.context.propose",
          key: instrument.id,
          limit: PROPOSALS_PER_HOUR,
          windowMs: 3_600_000,
        };
        await rateLimit(em, [limit], at);
        const row = await insertDraft(em, {
          instrumentId: instrument.id,
          text,
          citations,
          inputId: draft.inputId,
          author,
          at,
        });
        const [revision] = await revisionAnswers(em, [row]);
        await contextProposed(em, instrument.symbol, revision);
        return create(ContextProposalResultSchema, { revision });
      }),
    );
  };

  /**
   * Approves or rejects a draft: only a person (never AI output, never a
   * service alone: auth.person_required) on the editor list
   * (auth.editor_required), recording who and when.
   */
  const review = async (
    call: HandlerContext,
    symbol: string,
    decision: ContextDecision,
    approved: boolean,
    once: Idempotency,
  ) => {
    const number = decision.revision;
    const note = decision.note.trim();
    const approver = approverOf(call);
    answerStatus(call, 200);
    return ctx.transaction((em) =>
      once.run(em, async () => {
        const instrument = await instrumentOf(em, symbol);
        const row = await revisionForDecision(em, instrument.id, number);
        if (!row) throw revisionNotFound(symbol, number);
        if (row.status !== "draft")
          throw problem(409, "context.not_draft", `Revision ${number} is ${row.status}, not a draft awaiting review.`, {
            status: row.status,
          });
        await decide(em, row, { approver, at: ctx.clock.now(), approved, note });
        const [revision] = await revisionAnswers(em, [row]);
        return create(ContextProposalResultSchema, { revision });
      }),
    );
  };

  /** Publishes an approved revision (an editor, or a service acting for nobody), superseding the published one. */
  const publishOne = async (call: HandlerContext, symbol: string, decision: ContextDecision, once: Idempotency) => {
    const number = decision.revision;
    if (decision.note !== "") throw invalid("publish.note", "A note goes with approve or reject, not publish.");
    const by = relatedActor(call);
    answerStatus(call, 200);
    return ctx.transaction((em) =>
      once.run(em, async () => {
        const instrument = await instrumentOf(em, symbol);
        const row = await revisionForDecision(em, instrument.id, number);
        if (!row) throw revisionNotFound(symbol, number);
        if (row.status !== "approved")
          throw problem(
            409,
            "context.not_approved",
            `Revision ${number} is ${row.status}: only a revision a market-context editor approved is published.`,
            { status: row.status },
          );
        const superseded = await publish(em, row, by, ctx.clock.now());
        const [revision] = await revisionAnswers(em, [row]);
        await contextPublished(em, instrument.symbol, revision, superseded);
        return create(ContextProposalResultSchema, { revision });
      }),
    );
  };

  return {
    async getContext(request, call) {
      const symbol = requireSymbol("symbol", request.symbol);
      // Drafts are for editors and services (designed): anyone else asking is refused, never quietly served less.
      if (!request.all) {
        const read = await readPublishedContext(ctx, symbol);
        if (!read) throw instrumentNotFound(symbol);
        return create(ContextReadResultSchema, { result: { case: "context", value: read } });
      }
      const em = ctx.orm.em.fork();
      const instrument = await instrumentOf(em, symbol);
      const { published, drafts } = await contextRevisions(em, instrument.id);
      const answers = await revisionAnswers(em, published ? [published, ...drafts] : drafts);
      return create(ContextReadResultSchema, {
        result: {
          case: "context",
          value: {
            symbol: instrument.symbol,
            published: published ? answers[0] : undefined,
            drafts: answers.slice(published ? 1 : 0),
          },
        },
      });
    },

    async getContextInput(request) {
      const symbol = requireSymbol("symbol", request.symbol);
      const { instrument, stored } = await ctx.transaction(async (em) => {
        const found = await instrumentOf(em, symbol);
        return { instrument: found, stored: await storeInput(em, found.id, ctx.clock.now()) };
      });
      return create(ContextReadResultSchema, {
        result: {
          case: "input",
          value: {
            inputId: stored.input.id,
            symbol: instrument.symbol,
            workflow: CONTEXT_WORKFLOW,
            sources: stored.sources.map(sourceToProto),
            createdAt: timestampFromDate(stored.input.createdAt),
          },
        },
      });
    },

    async proposeContext(request: ContextProposal, call) {
      const symbol = requireSymbol("symbol", request.symbol);
      const principal = principalOf(call);
      const once = idempotencyOf(call, request, { scope: `context:${principal.sub}:${principal.actingSubject ?? ""}` });
      const action = request.action;
      switch (action.case) {
        case "propose":
          return propose(call, symbol, action.value, once);
        case "approve":
          return review(call, symbol, action.value, true, once);
        case "reject":
          return review(call, symbol, action.value, false, once);
        case "publish":
          return publishOne(call, symbol, action.value, once);
        default:
          throw invalid("action", "One of propose, approve, reject or publish is required.");
      }
    },
  };
}

function revisionNotFound(symbol: string, revision: number): Error {
  return problem(404, "context.not_found", `${symbol} has no context revision ${revision}.`, { symbol, revision });
}

function instrumentNotFound(symbol: string): Error {
  return problem(404, "instrument.not_found", `There is no instrument ${symbol}.`, { symbol });
}
