import { sql } from "../../kit/db/sql.js";
import type { IndexDocument } from "../../../gen/pf/search/v1/documents_pb.js";
import { publicDocument, type SearchDocumentSource } from "../../kit/search-documents/document.js";

interface PageText {
  creator: string;
  accepting: boolean;
  created_at: Date;
  goals: string;
}

/**
 * A creator's public tip page as a search document (type `tip_page`, id the creator, README "Search documents"):
 * only while the page is switched on; its text is the open public goals the page shows. Switched off: tombstoned.
 */
export const tipPageDocuments: SearchDocumentSource = {
  type: "tip_page",
  async describe(em, ids) {
    const rows = await sql<PageText>(
      em,
      `select p.creator, p.accepting, p.created_at,
              coalesce((select string_agg(g.title || case when g.description <> '' then E'\\n' || g.description else '' end,
                                          E'\\n\\n' order by g.position, g.id)
                        from {goals} g where g.creator = p.creator and g.public and g.closed_at is null), '') as goals
       from {profiles} p where p.creator in (?) and p.page_enabled`,
      [ids],
    );
    return new Map(rows.map((row) => [row.creator, documentOf(row)]));
  },
  async ids(em, after, limit) {
    const rows = await sql<{ creator: string }>(
      em,
      `select creator from {profiles} where page_enabled and creator > ? order by creator limit ?`,
      [after, limit],
    );
    return rows.map((row) => row.creator);
  },
};

function documentOf(row: PageText): IndexDocument {
  return publicDocument({
    title: `Tips for ${row.creator}`,
    body: row.goals,
    facets: { accepting: [String(row.accepting)] },
    publishedAt: new Date(row.created_at),
  });
}
