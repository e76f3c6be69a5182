import type { EntityManager } from "@mikro-orm/postgresql";
import { plainText } from "../../kit/rich-text/markdown.js";
import type { IndexDocument } from "../../../gen/pf/search/v1/documents_pb.js";
import { publicDocument, type SearchDocumentSource } from "../../kit/search-documents/document.js";
import type { Cited } from "../domain/text.js";
import { sql } from "../../kit/db/sql.js";

interface StoryText {
  id: string;
  published_at: Date;
  headline: Cited;
  paragraphs: Cited[];
}

/**
 * A story's search document (type `story`): published stories only, with the
 * published revision's text; unpublished and retracted stories are tombstoned
 * (a retracted story "leaves sitemaps and search").
 */
export const storyDocuments: SearchDocumentSource = {
  type: "story",
  async describe(em, ids) {
    const rows = await sql<StoryText>(
      em,
      `select s.id, s.published_at, r.headline, r.paragraphs from {stories} s
       join {story_revisions} r on r.story_id = s.id and r.n = s.published_revision
       where s.id in (?) and s.state = 'published'`,
      [ids],
    );
    return new Map(rows.map((row) => [row.id, documentOf(row)]));
  },
  async ids(em: EntityManager, after: string, limit: number) {
    const rows = await sql<{ id: string }>(
      em,
      `select id from {stories} where state = 'published' and id > ? order by id limit ?`,
      [after, limit],
    );
    return rows.map((row) => row.id);
  },
};

/** No url: search takes absolute addresses only and news knows no site address (README "Search"), as blog. */
function documentOf(row: StoryText): IndexDocument {
  return publicDocument({
    title: plainText(row.headline.text),
    body: row.paragraphs.map((paragraph) => plainText(paragraph.text)).join("\n\n"),
    publishedAt: new Date(row.published_at),
  });
}
