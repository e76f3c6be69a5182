import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  type NewsStoryService,
  type RevisionInput,
  type StoryReviseRequest,
  type StoryReviseResult,
  StoryReviseResultSchema,
} from "../../../gen/pf/news/v1/stories_pb.js";
import { callerOf, relatedActor } from "../../kit/auth/principal.js";
import { type AiRule, type Author, approverOf, authorOf } from "../../kit/auth/authorship.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { checkRevision, ifMatchOf } from "../../kit/handler/revisions.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { aiDraftToProto, flagToProto, revisionToProto } from "../db/answers.js";
import {
  flagsOf,
  fulfilAiDraft,
  insertAiDraft,
  insertApproval,
  insertFlag,
  insertNote,
  insertRevision,
  revisionOf,
} from "../db/revisions.js";
import { lockStory, perspectivesOf, sourcesOf, type StoryRecord, timelineOf, touchStory } from "../db/stories.js";
import { aiAssisted } from "../domain/publish.js";
import { citedText, LIMITS } from "../domain/text.js";
import { aiDraftRequested, storyChanged, subjects } from "../events.js";

type RevisionHandlers = Pick<
  ServiceImpl<typeof NewsStoryService>,
  "saveRevision" | "requestAiDraft" | "addFlag" | "approveRevision"
>;

/** AI drafts of stories (designed: the spec names no workflow). */
export const DRAFT_RULE: AiRule = {
  workflow: "news.draft_story",
  code: "revision.workflow_required",
  fields: { workflow: "revision.workflow", runId: "revision.run_id", stubProvider: "revision.stub_provider" },
};

const result = (value: StoryReviseResult["result"]) => create(StoryReviseResultSchema, { result: value });

/** Revisions, AI draft requests, editorial flags and approvals. */
export function revisionHandlers(ctx: ServiceContext): RevisionHandlers {
  return {
    async saveRevision(request, call) {
      const input = request.revision!; // declared required
      const author = writerOf(call, input);
      const once = idempotencyOf(call, request, { scope: `revision:${request.id}` });
      return ctx.transaction((em) => once.run(em, () => saveRevision(ctx, em, call, request, input, author)));
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
        return result({ case: "aiDraft", value: draft });
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
        return result({ case: "flag", value: flagToProto(flag) });
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
        return result({ case: "revision", value: revisionToProto((await revisionOf(em, story.id, revision.n))!) });
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

async function saveRevision(
  ctx: ServiceContext,
  em: EntityManager,
  call: HandlerContext,
  request: StoryReviseRequest,
  input: RevisionInput,
  author: Author,
) {
  const story: StoryRecord = await lockStory(em, request.id);
  const expected = input.expectedRevision === undefined ? undefined : BigInt(input.expectedRevision);
  checkRevision(BigInt(story.latest_revision), expected, ifMatchOf(call));
  const sources = await sourcesOf(em, story.id);
  const live = new Set(sources.filter((s) => !s.detached_at && !s.removed_upstream).map((s) => s.number));
  // Declared: a headline, at most 200 paragraphs, each text not blank, based_on not negative.
  const headline = citedText("revision.headline", input.headline!, LIMITS.headline, live);
  const paragraphs = input.paragraphs.map((p, i) => citedText(`revision.paragraphs[${i}]`, p, LIMITS.paragraph, live));
  if (input.basedOn > story.latest_revision)
    throw invalid("revision.based_on", `based_on is one of 0–${story.latest_revision}`);
  const flags = new Set((await flagsOf(em, story.id)).map((flag) => flag.id));
  const unknownFlag = input.answersFlags.find((flag) => !flags.has(flag));
  if (unknownFlag !== undefined)
    throw problem(422, "flag.not_found", `${unknownFlag} is not a flag of this story.`, {
      field: "revision.answers_flags",
    });
  // Declared: a note's kind correction or update, its text not blank, at most 2000 characters.
  const note = input.note && { kind: input.note.kind, text: input.note.text };
  // The revision it rests on: the one named, else the newest.
  const base = await revisionOf(em, story.id, input.basedOn || story.latest_revision);
  const at = ctx.clock.now();
  const n = await insertRevision(em, {
    story: story.id,
    headline,
    paragraphs,
    author,
    aiAssisted:
      author.kind !== "ai" &&
      aiAssisted(
        input.aiAssisted,
        base && { ai: base.author_kind === "ai", aiAssisted: base.ai_assisted, approved: base.approver !== null },
      ),
    basedOn: input.basedOn,
    answersFlags: [...new Set(input.answersFlags)],
    snapshot: {
      sources,
      timeline: await timelineOf(em, story.id),
      perspectives: await perspectivesOf(em, story.id),
    },
    aiDraftId: input.aiDraftId || null,
    at,
  });
  if (input.aiDraftId !== "" && !(await fulfilAiDraft(em, story.id, input.aiDraftId, n)))
    throw problem(422, "ai_draft.not_open", "No open AI draft request of this story has that id.", {
      field: "revision.ai_draft_id",
    });
  if (note)
    await insertNote(em, {
      story: story.id,
      revision: n,
      ...note,
      by: author.kind === "person" ? author.person : author.service,
      at,
    });
  await touchStory(em, story.id, at, { latest_revision: n });
  await storyChanged(em, subjects.revised, story, at, { revision: n });
  return result({ case: "revision", value: revisionToProto((await revisionOf(em, story.id, n))!) });
}
