import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { AiDraftRequestedSchema, ClusterChangedSchema, StoryChangedSchema } from "../../gen/pf/news/v1/events_pb.js";
import type { AiDraft } from "../../gen/pf/news/v1/story_pb.js";
import { recordEvent } from "../kit/events/outbox.js";
import { auditToProto } from "./db/answers.js";
import type { AuditRecord } from "./db/clusters.js";
import type { StoryRecord } from "./db/stories.js";

/** The subjects this service publishes (events.proto; designed, the spec names none). */
export const subjects = {
  created: "news.story.created",
  revised: "news.story.revised",
  published: "news.story.published",
  unpublished: "news.story.unpublished",
  retracted: "news.story.retracted",
  flagged: "news.story.flagged",
  clusterChanged: "news.cluster.changed",
  aiDraftRequested: "news.ai_draft.requested",
} as const;

/** A story event, in the transaction of the change; sitemaps follow noindex and in_sitemap. */
export function storyChanged(
  em: EntityManager,
  subject: (typeof subjects)[Exclude<keyof typeof subjects, "clusterChanged" | "aiDraftRequested">],
  story: Pick<StoryRecord, "id" | "state">,
  at: Date,
  extra: { revision?: number; flagId?: string } = {},
) {
  const listed = story.state === "published";
  return recordEvent(em, subject, StoryChangedSchema, {
    storyId: story.id,
    state: story.state,
    revision: extra.revision ?? 0,
    noindex: !listed,
    inSitemap: listed,
    flagId: extra.flagId ?? "",
    at: timestampFromDate(at),
  });
}

/** news.cluster.changed: a merge, split or reversal with the items it moved. */
export function clusterChanged(em: EntityManager, audit: AuditRecord) {
  return recordEvent(em, subjects.clusterChanged, ClusterChangedSchema, { audit: auditToProto(audit) });
}

/** news.ai_draft.requested: for the AI workflow news.draft_story, with the numbered source input. */
export function aiDraftRequested(em: EntityManager, draft: AiDraft) {
  return recordEvent(em, subjects.aiDraftRequested, AiDraftRequestedSchema, { draft });
}
