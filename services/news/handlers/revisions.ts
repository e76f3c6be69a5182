import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import type { NewsStoryService, RevisionInput } from "../../../gen/pf/news/v1/stories_pb.js";
import { verifiedAuthor } from "../../kit/auth/ai-runs.js";
import { type Author, approverOf, authorOf } from "../../kit/auth/authorship.js";
import { callerOf, relatedActor } from "../../kit/auth/principal.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { ifMatchOf } from "../../kit/handler/revisions.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { aiDraftToProto, flagToProto, revisionToProto } from "../db/answers.js";
import { flagsOf, insertAiDraft, insertApproval, insertFlag, revisionOf } from "../db/revisions.js";
import { lockStory, sourcesOf, touchStory } from "../db/stories.js";
import { aiDraftRequested, storyChanged, subjects } from "../events.js";
import { DRAFT_RULE, reviseResult, saveRevision } from "../revisions.js";

type RevisionHandlers = Pick<
  ServiceImpl<typeof NewsStoryService>,
  "saveRevision" | "requestAiDraft" | "addFlag" | "approveRevision"
>;

/** Revisions, AI draft requests, editorial flags and approvals. */
export function revisionHandlers(ctx: ServiceContext): RevisionHandlers {
  const ai = ctx.client(AiService);
  return {
    async saveRevision(request, call) {
      const input = request.revision!; // declared required
      const author = await verifiedAuthor(ai, writerOf(call, input), DRAFT_RULE);
      const once = idempotencyOf(call, request, { scope: `revision:${request.id}` });
      const ifMatch = ifMatchOf(call);
      return ctx.transaction((em) => once.run(em, () => saveRevision(ctx, em, request, input, author, ifMatch)));
    },

    async requestAiDraft(request, call) {
      const by = relatedActor(call);
      // Declared: ai_draft set, instructions at most 2000 characters, base_revision not negative.
      const input = request.aiDraft!;
      const { instructions } = input;
      return ctx.transaction(async (em) => {
        const story = await lockStory(em, request.id);
        if (input.baseRevision > story.latest_revision)
          throw invalid("ai_draft.base_revision", `base_revision is one of 0–${story.latest_revision}`);
        const at = ctx.clock.now();
        const row = await insertAiDraft(em, { story: story.id, base: input.baseRevision, instructions, by, at });
        const live = (await sourcesOf(em, story.id)).filter((s) => !s.detached_at && !s.removed_upstream);
        const draft = aiDraftToProto(row, live);
        await aiDraftRequested(em, draft);
        return reviseResult({ case: "aiDraft", value: draft });
      });
    },

    async addFlag(request, call) {
      const by = relatedActor(call);
      // Declared: flag set, its note not blank, at most 2000 characters.
      const input = request.flag!;
      const { note } = input;
      return ctx.transaction(async (em) => {
        const story = await lockStory(em, request.id);
        const at = ctx.clock.now();
        const id = await insertFlag(em, { story: story.id, kind: "editorial", note, blocking: input.blocking, by }, at);
        await touchStory(em, story.id, at);
        await storyChanged(em, subjects.flagged, story, at, { flagId: id });
        const flag = (await flagsOf(em, story.id)).find((row) => row.id === id)!;
        return reviseResult({ case: "flag", value: flagToProto(flag) });
      });
    },

    async approveRevision(request, call) {
      const approver = approverOf(call);
      const { note } = request; // at most 2000 characters, declared
      return ctx.transaction(async (em) => {
        const story = await lockStory(em, request.id);
        const revision = await revisionOf(em, story.id, request.n);
        if (!revision) throw problem(404, "revision.not_found", `The story has no revision ${request.n}.`);
        if (revision.author_kind !== "ai" && !revision.ai_assisted)
          throw problem(
            409,
            "revision.approval_not_needed",
            "Only AI-generated or AI-assisted revisions need approval.",
          );
        const at = ctx.clock.now();
        if (await insertApproval(em, { story: story.id, n: revision.n, approver, note, at }))
          await touchStory(em, story.id, at);
        return reviseResult({
          case: "revision",
          value: revisionToProto((await revisionOf(em, story.id, revision.n))!),
        });
      });
    },
  };
}

/**
 * Who writes a revision: AI output (X-PF-Origin: ai, naming news.draft_story
 * and its run), never attributed to a person; otherwise the editor the
 * route's relation admitted (a person, or a service acting for nobody).
 */
function writerOf(call: HandlerContext, input: RevisionInput): Author {
  const claim = { workflow: input.workflow, runId: input.runId, stubProvider: input.stubProvider };
  // The "editor" rule admitted an editor (its relation held), the "ai" rule AI output sent for nobody.
  if (callerOf(call).admittedBy === "ai") return authorOf(call, claim, DRAFT_RULE);
  if (input.aiDraftId !== "") throw invalid("revision.ai_draft_id", "Only AI output answers an AI draft request.");
  return authorOf(call, claim, DRAFT_RULE);
}
