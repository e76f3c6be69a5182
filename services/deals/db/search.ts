import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import type { IndexDocument } from "../../../gen/pf/search/v1/documents_pb.js";
import { publicDocument, type SearchDocumentSource } from "../../kit/search-documents/document.js";

interface OfferText {
  id: string;
  link: string;
  title: string;
  description: string;
  category: string;
  product_id: string | null;
  created_at: Date;
}

/** An active offer no one asked to keep unindexed: neither merged, disabled, expired nor awaiting a person's review. */
const LISTED = `merged_into is null and disabled_at is null and expired_at is null and not noindex`;

/**
 * An offer's search document (type `offer`, README "Search documents"): public offers only; merged, disabled,
 * expired and unreviewed AI-assisted (noindex) offers are tombstoned.
 */
export const offerDocuments: SearchDocumentSource = {
  type: "offer",
  async describe(em, ids, at) {
    const rows = await sql<OfferText>(
      em,
      `select id, link, title, description, category, product_id, created_at from {offers}
       where id in (?) and ${LISTED} and (expires_at is null or expires_at > ?)`,
      [ids, at],
    );
    return new Map(rows.map((row) => [row.id, documentOf(row)]));
  },
  async ids(em: EntityManager, after: string, limit: number) {
    const rows = await sql<{ id: string }>(
      em,
      `select id from {offers} where ${LISTED} and id > ? order by id limit ?`,
      [after, limit],
    );
    return rows.map((row) => row.id);
  },
};

function documentOf(row: OfferText): IndexDocument {
  return publicDocument({
    title: row.title,
    body: row.description,
    url: row.link,
    facets: {
      ...(row.category !== "" && { category: [row.category] }),
      ...(row.product_id && { product: [row.product_id] }),
    },
    publishedAt: new Date(row.created_at),
  });
}
