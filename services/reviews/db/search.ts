import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import type { IndexDocument } from "../../../gen/pf/search/v1/documents_pb.js";
import { publicDocument, type SearchDocumentSource } from "../../kit/search-documents/document.js";
import { plainText } from "../../kit/rich-text/markdown.js";
import { refreshSearchDocuments } from "../../kit/search-documents/record.js";
import type { PointColumn } from "./entities.js";

interface EntityText {
  id: string;
  name: string;
  description: string;
  created_at: Date;
  overview: string | null;
  pros: PointColumn[] | null;
  cons: PointColumn[] | null;
}

/**
 * An entity's search document (type `entity`, README "Search documents"):
 * active entities only (merged and deleted ones are tombstoned), carrying the
 * published summary only: a proposal never reaches search until a person
 * approved and published it.
 */
export const entityDocuments: SearchDocumentSource = {
  type: "entity",
  async describe(em, ids) {
    const rows = await sql<EntityText>(
      em,
      `select e.id, e.name, e.description, e.created_at, s.overview, s.pros, s.cons
       from {entities} e
       left join {summary_revisions} s on s.entity_id = e.id and s.state = 'published'
       where e.id in (?) and e.state = 'active'`,
      [ids],
    );
    return new Map(rows.map((row) => [row.id, documentOf(row)]));
  },
  async ids(em: EntityManager, after: string, limit: number) {
    const rows = await sql<{ id: string }>(
      em,
      `select id from {entities} where state = 'active' and id > ? order by id limit ?`,
      [after, limit],
    );
    return rows.map((row) => row.id);
  },
};

function documentOf(row: EntityText): IndexDocument {
  const summary = [row.overview ?? "", ...(row.pros ?? []).map((p) => p.text), ...(row.cons ?? []).map((p) => p.text)];
  return publicDocument({
    title: row.name,
    body: plainText([row.description, ...summary].filter((part) => part !== "").join("\n\n")),
    publishedAt: new Date(row.created_at),
  });
}

/** Refreshes entities' search documents in the changing transaction, after writing what it changed. */
export async function refreshEntities(em: EntityManager, ids: string[], at: Date): Promise<void> {
  await em.flush();
  await refreshSearchDocuments(em, entityDocuments, ids, at);
}
