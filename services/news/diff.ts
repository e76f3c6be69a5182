import { create } from "@bufbuild/protobuf";
import type { EntityManager } from "@mikro-orm/postgresql";
import { type StoryDiff, StoryDiffSchema } from "../../gen/pf/news/v1/story_pb.js";
import { invalid, problem } from "../kit/handler/problem.js";
import { diffRevisions } from "../kit/revisions/diff.js";
import { revisionDiffToProto } from "../kit/revisions/proto.js";
import { type RevisionRecord, revisionOf } from "./db/revisions.js";
import type { StoryRecord } from "./db/stories.js";

/** A revision's text for the diff: the headline, and the paragraphs each with its citations. */
function textOf(revision: RevisionRecord) {
  const cited = (text: string, citations: number[]) => (citations.length ? `${text} [${citations.join(", ")}]` : text);
  return {
    headline: cited(revision.headline.text, revision.headline.citations),
    body: revision.paragraphs.map((p) => cited(p.text, p.citations)).join("\n\n"),
  };
}

/** The diff of revision `from` (default: the one before `to`) to `to` (default: the newest). */
export async function diffOf(
  em: EntityManager,
  story: StoryRecord,
  from: number | undefined,
  to: number | undefined,
): Promise<StoryDiff> {
  const newer = to ?? story.latest_revision;
  const older = from ?? newer - 1;
  if (older < 1 || newer < 1 || older >= newer)
    throw invalid(from === undefined ? "to" : "from", "from must be a revision before to (both from 1).");
  const [a, b] = [await revisionOf(em, story.id, older), await revisionOf(em, story.id, newer)];
  if (!a || !b) throw problem(404, "revision.not_found", `The story has no revision ${a ? newer : older}.`);
  const live = (r: RevisionRecord) => new Set(r.snapshot.sources.filter((s) => !s.detached_at).map((s) => s.number));
  const known = new Set(a.snapshot.sources.map((s) => s.number));
  const [liveA, liveB] = [live(a), live(b)];
  return create(StoryDiffSchema, {
    storyId: story.id,
    text: revisionDiffToProto(
      diffRevisions({ n: older, text: textOf(a) }, { n: newer, text: textOf(b) }, ["headline", "body"]),
    ),
    sourcesAdded: b.snapshot.sources.map((s) => s.number).filter((n) => !known.has(n)),
    sourcesDetached: [...liveA].filter((n) => !liveB.has(n)),
  });
}
