import { sql } from "../../kit/db/sql.js";
import type { IndexDocument } from "../../../gen/pf/search/v1/documents_pb.js";
import { publicDocument, type SearchDocumentSource } from "../../kit/search-documents/document.js";
import { plainText } from "../../kit/rich-text/markdown.js";

interface PostText {
  id: string;
  handle: string;
  language: string;
  title: string;
  summary: string;
  body: string;
  taxonomy: string[];
  published_at: Date;
}

/**
 * Published public posts as search documents (type `post`, id the post): the
 * published revision's text. Anything else (draft, unpublished, deleted,
 * members-only, private, or an AI-generated or AI-assisted revision, which is
 * noindex) is left out, so search gets a tombstone (README "Search").
 */
export const postDocuments: SearchDocumentSource = postDocumentSource();

function postDocumentSource(): SearchDocumentSource {
  const where = `p.state = 'published' and p.visibility = 'public' and not r.review_required`;
  const from = `{posts} p join {blogs} b on b.id = p.blog_id
     join {post_revisions} r on r.post_id = p.id and r.n = p.published_revision`;
  return {
    type: "post",
    async describe(em, ids) {
      const rows = await sql<PostText>(
        em,
        `select p.id, b.handle, b.language, r.title, r.summary, r.body, p.taxonomy, p.published_at
         from ${from} where p.id in (?) and ${where}`,
        [ids],
      );
      return new Map(rows.map((row) => [row.id, documentOf(row)]));
    },
    async ids(em, after, limit) {
      const rows = await sql<{ id: string }>(
        em,
        `select p.id from ${from} where ${where} and p.id > ? order by p.id limit ?`,
        [after, limit],
      );
      return rows.map((row) => row.id);
    },
  };
}

/** No url: the source is static and the site address a setting (README "Search"); readers find it by facets. */
function documentOf(row: PostText): IndexDocument {
  return publicDocument({
    title: row.title,
    body: [row.summary, plainText(row.body)].filter((part) => part !== "").join("\n\n"),
    lang: row.language,
    facets: { taxonomy: row.taxonomy, blog: [row.handle] },
    publishedAt: new Date(row.published_at),
  });
}
