import type { EntityManager } from "@mikro-orm/postgresql";
import { sql } from "../../kit/db/sql.js";
import type { IndexDocument } from "../../../gen/pf/search/v1/documents_pb.js";
import { publicDocument, type SearchDocumentSource } from "../../kit/search-documents/document.js";

interface CodeRow {
  id: string;
  code: string;
  description: string;
  restrictions: string;
  published_at: Date;
  merchant_id: string;
  merchant_name: string;
  merchant_host: string;
}

/**
 * A code's search document (type `coupon`, README "Search documents"): exactly the active results, a published,
 * unmoderated code of an approved merchant not past its end; every other code is tombstoned (a disabled merchant's
 * codes with it).
 */
export const couponDocuments: SearchDocumentSource = {
  type: "coupon",
  async describe(em, ids, at) {
    const rows = await sql<CodeRow>(
      em,
      `select c.id, c.code, c.description, c.restrictions, c.published_at,
              m.id as merchant_id, m.name as merchant_name, m.host as merchant_host
       from {coupons} c join {merchants} m on m.id = c.merchant_id
       where c.id in (?) and c.published_at is not null and c.moderation = ''
         and (c.expires_at is null or c.expires_at > ?) and m.status = 'approved'`,
      [ids, at],
    );
    return new Map(rows.map((row) => [row.id, documentOf(row)]));
  },
  ids: (em, after, limit) => idsAfter(em, `published_at is not null`, after, limit),
};

function documentOf(row: CodeRow): IndexDocument {
  return publicDocument({
    title: `${row.code} — ${row.merchant_name}`,
    body: [row.description, row.restrictions].filter((text) => text !== "").join("\n\n"),
    url: `https://${row.merchant_host}/`,
    facets: { merchant: [row.merchant_id], site: [row.merchant_host] },
    publishedAt: new Date(row.published_at),
  });
}

async function idsAfter(em: EntityManager, where: string, after: string, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }>(em, `select id from {coupons} where ${where} and id > ? order by id limit ?`, [
    after,
    limit,
  ]);
  return rows.map((row) => row.id);
}

/** The ids of a merchant's codes: its status decides whether they are searchable. */
export async function merchantCodeIds(em: EntityManager, merchantId: string): Promise<string[]> {
  const rows = await sql<{ id: string }>(em, `select id from {coupons} where merchant_id = ?`, [merchantId]);
  return rows.map((row) => row.id);
}
