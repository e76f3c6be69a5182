import type { EntityManager } from "@mikro-orm/postgresql";
import { create } from "@bufbuild/protobuf";
import {
  type RevisionInput,
  type StoryReviseRequest,
  type StoryReviseResult,
  StoryReviseResultSchema,
} from "../../gen/pf/news/v1/stories_pb.js";
import type { AiRule, Author } from "../kit/auth/authorship.js";
import { invalid, problem } from "../kit/handler/problem.js";
import { checkRevision, type ifMatchOf } from "../kit/handler/revisions.js";
import type { ServiceContext } from "../kit/service/module.js";
import { revisionToProto } from "./db/answers.js";
import { flagsOf, fulfilAiDraft, insertNote, insertRevision, revisionOf } from "./db/revisions.js";
import { lockStory, perspectivesOf, sourcesOf, type StoryRecord, timelineOf, touchStory } from "./db/stories.js";
import { aiAssisted } from "./domain/publish.js";
import { citedText, LIMITS } from "./domain/text.js";
import { storyChanged, subjects } from "./events.js";

/** AI drafts of stories (designed: the spec names no workflow). */
export const DRAFT_RULE: AiRule = {
  workflow: "news.draft_story",
  code: "revision.workflow_required",
  fields: { workflow: "revision.workflow", runId: "revision.run_id", stubProvider: "revision.stub_provider" },
};

/** A revise route's answer. */
export const reviseResult = (value: StoryReviseResult["result"]) => create(StoryReviseResultSchema, { result: value });

/** Saves a revision (a writer's, or the AI draft news asked for itself, consumers/ai-drafts.ts) under the story's lock. */
export async function saveRevision(
  ctx: ServiceContext,
  em: EntityManager,
  request: Pick<StoryReviseRequest, "id">,
  input: RevisionInput,
  author: Author,
  ifMatch?: ReturnType<typeof ifMatchOf>,
) {
  const story: StoryRecord = await lockStory(em, request.id);
  const expected = input.expectedRevision === undefined ? undefined : BigInt(input.expectedRevision);
  checkRevision(BigInt(story.latest_revision), expected, ifMatch);
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
  return reviseResult({ case: "revision", value: revisionToProto((await revisionOf(em, story.id, n))!) });
}
