import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import { type Run, SourceDocumentSchema } from "../../../gen/pf/ai/v1/runs_pb.js";
import { AiDraftRequestedSchema } from "../../../gen/pf/news/v1/events_pb.js";
import type { AiDraft } from "../../../gen/pf/news/v1/story_pb.js";
import { RevisionInputSchema, type RevisionInput } from "../../../gen/pf/news/v1/stories_pb.js";
import { ProblemSchema } from "../../../gen/pf/v1/problem_pb.js";
import { effect } from "../../kit/effects/effect.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { revisionOf, type RevisionRecord } from "../db/revisions.js";
import { LIMITS } from "../domain/text.js";
import { subjects } from "../events.js";
import { DRAFT_RULE, saveRevision } from "../revisions.js";

/** The document holding the story's current text, beside its numbered sources. */
const CURRENT_TEXT = "current";

/**
 * News answers its own AI draft requests through the AI service: the workflow news.draft_story on the story's live
 * sources and current text, run with news's own token for nobody, saved as the AI revision answering the request
 * with the run's id and stub flag. While the AI service does not answer the effect retries; a run that failed
 * leaves the request open (logged), as does one the AI service refuses (recorded as the effect's refusal).
 */
export const aiDrafts = effect<ServiceContext, typeof AiDraftRequestedSchema>({
  name: "ai-drafts",
  subject: subjects.aiDraftRequested,
  event: AiDraftRequestedSchema,
  orderKey: (event) => event.draft?.storyId ?? "",
  async apply(event, ctx) {
    const draft = event.draft!;
    const base =
      draft.baseRevision > 0 ? await revisionOf(ctx.orm.em.fork(), draft.storyId, draft.baseRevision) : undefined;
    const { run } = await ctx.client(AiService).createRun({
      workflow: DRAFT_RULE.workflow,
      variables: { topic: topicOf(draft, base) },
      documents: documentsOf(draft, base),
    });
    if (run?.state !== "succeeded") {
      // A run still going past the wait is asked again on the retry; one that ended otherwise stays unanswered.
      if (run?.state === "queued" || run?.state === "running") throw new Error(`AI run ${run.id} has not ended`);
      ctx.logger.warn({ draft: draft.id, run: run?.id, failure: run?.failure?.code }, "AI draft run did not succeed");
      return;
    }
    const input = draftRevision(draft, base, run);
    const author = {
      kind: "ai",
      workflow: run.workflow,
      runId: run.id,
      stubProvider: run.stub,
      service: `svc:${ctx.key}`,
    } as const;
    await ctx
      .transaction((em) => saveRevision(ctx, em, { id: draft.storyId }, input, author))
      .catch((error: unknown) => {
        // Answered meanwhile (by an outside AI caller, or this effect before a crash): nothing left to do.
        if (!(error instanceof ConnectError && error.findDetails(ProblemSchema)[0]?.code === "ai_draft.not_open"))
          throw error;
      });
  },
});

/** What the story is about: the base revision's headline, else its first source's title, with the instructions. */
function topicOf(draft: AiDraft, base: RevisionRecord | undefined): string {
  const subject = base?.headline.text || draft.sources[0]?.title || "the story";
  return draft.instructions === "" ? subject : `${subject} (${draft.instructions})`;
}

/** The live sources by number, and the current text. */
function documentsOf(
  draft: AiDraft,
  base: RevisionRecord | undefined,
): MessageInitShape<typeof SourceDocumentSchema>[] {
  const sources = draft.sources.map((source) => ({
    id: String(source.number),
    text: source.title,
    title: source.title,
    url: source.canonicalUrl,
  }));
  if (!base) return sources;
  const text = [base.headline, ...base.paragraphs].map((cited) => cited.text).join("\n");
  return [...sources, { id: CURRENT_TEXT, text, title: base.headline.text }];
}

/** The run's answer as a revision: the headline kept, the answer one paragraph citing the sources it cites. */
function draftRevision(draft: AiDraft, base: RevisionRecord | undefined, run: Run): RevisionInput {
  const live = new Set(draft.sources.map((source) => source.number));
  const citations = [...new Set(run.citations.map((citation) => Number(citation.documentId)))].filter((n) =>
    live.has(n),
  );
  const headline = (base?.headline.text || draft.sources[0]?.title || "AI draft").slice(0, LIMITS.headline);
  const text = (run.output?.text ?? "").trim().slice(0, LIMITS.paragraph);
  return create(RevisionInputSchema, {
    headline: { text: headline, citations: base?.headline.citations.filter((n) => live.has(n)) ?? [] },
    paragraphs: text === "" ? [] : [{ text, citations }],
    basedOn: draft.baseRevision,
    workflow: run.workflow,
    runId: run.id,
    stubProvider: run.stub,
    aiDraftId: draft.id,
  });
}
