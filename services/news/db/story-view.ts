import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { type Story, StorySchema } from "../../../gen/pf/news/v1/story_pb.js";
import { type Problem, publishProblems } from "../domain/publish.js";
import {
  flagToProto,
  noteToProto,
  perspectivesToProto,
  revisionToProto,
  sourceToProto,
  timelineToProto,
} from "./answers.js";
import { type FlagRecord, flagsOf, type NoteRecord, notesOf, type RevisionRecord, revisionOf } from "./revisions.js";
import {
  type PerspectiveRecord,
  perspectivesOf,
  type SourceRecord,
  sourcesOf,
  type StoryRecord,
  type TimelineRecord,
  timelineOf,
} from "./stories.js";

/** Everything a story read shows. */
export interface StoryView {
  story: StoryRecord;
  sources: SourceRecord[];
  timeline: TimelineRecord[];
  perspectives: PerspectiveRecord[];
  flags: FlagRecord[];
  notes: NoteRecord[];
  latest?: RevisionRecord;
  published?: RevisionRecord;
}

/** Loads a story's view (the story row as the caller read or locked it). */
export async function viewOf(em: EntityManager, story: StoryRecord): Promise<StoryView> {
  const latest = story.latest_revision > 0 ? await revisionOf(em, story.id, story.latest_revision) : undefined;
  const published =
    story.published_revision === null
      ? undefined
      : story.published_revision === story.latest_revision
        ? latest
        : await revisionOf(em, story.id, story.published_revision);
  return {
    story,
    sources: await sourcesOf(em, story.id),
    timeline: await timelineOf(em, story.id),
    perspectives: await perspectivesOf(em, story.id),
    flags: await flagsOf(em, story.id),
    notes: await notesOf(em, story.id),
    latest,
    published,
  };
}

/** Why a revision cannot be published now: its snapshot against the story's current source table and flags. */
export function problemsOf(view: Pick<StoryView, "sources" | "flags">, revision: RevisionRecord): Problem[] {
  const cited = [revision.headline, ...revision.paragraphs].flatMap((text) => text.citations);
  const restsOn = [...cited, ...revision.snapshot.timeline.map((entry) => entry.source_number)];
  const current = new Map(
    view.sources.map((s) => [s.number, { detached: s.detached_at !== null, removedUpstream: s.removed_upstream }]),
  );
  const blocking = view.flags.filter((f) => f.blocking && f.resolved_revision === null).map((f) => f.id);
  return publishProblems(
    {
      cited,
      restsOn,
      ai: revision.author_kind === "ai",
      aiAssisted: revision.ai_assisted,
      approved: revision.approver !== null,
      answersFlags: revision.answers_flags,
    },
    current,
    blocking,
  );
}

/** Whether readers may see the story at all: once published (unpublished answers 404, as if missing). */
export function readable(story: StoryRecord): boolean {
  return story.state === "published" || story.state === "retracted";
}

/** A story as an editor reads it (everything), or as anyone else does (the published revision and notes). */
export function storyToProto(view: StoryView, editor: boolean): Story {
  const { story } = view;
  const listed = story.state === "published";
  const base = create(StorySchema, {
    id: story.id,
    clusterId: story.cluster_id,
    state: story.state,
    latestRevision: editor ? story.latest_revision : 0,
    publishedRevision: story.published_revision ?? 0,
    published: view.published && readable(story) ? revisionToProto(view.published) : undefined,
    notes: view.notes.filter((note) => editor || note.published_at !== null).map(noteToProto),
    noindex: !listed,
    inSitemap: listed,
    retraction:
      story.state === "retracted"
        ? {
            note: story.retraction_note ?? "",
            by: story.retracted_by ?? "",
            at: timestampFromDate(new Date(story.retracted_at!)),
          }
        : undefined,
    createdAt: timestampFromDate(new Date(story.created_at)),
    publishedAt: story.published_at ? timestampFromDate(new Date(story.published_at)) : undefined,
    version: story.version,
  });
  if (!editor) return base;
  base.published = view.published ? revisionToProto(view.published) : undefined;
  base.latest = view.latest ? revisionToProto(view.latest) : undefined;
  base.sources = view.sources.map(sourceToProto);
  base.timeline = view.timeline.map(timelineToProto);
  base.perspectives = perspectivesToProto(view.perspectives, view.sources);
  base.flags = view.flags.map(flagToProto);
  base.problems = view.latest ? problemsOf(view, view.latest) : ["no_source"];
  base.createdBy = story.created_by;
  return base;
}
