import type { EntityManager } from "@mikro-orm/postgresql";
import type { IndexDocument } from "../../../gen/pf/search/v1/documents_pb.js";
import { sql } from "../../kit/db/sql.js";
import { publicDocument, type SearchDocumentSource } from "../../kit/search-documents/document.js";
import { lockChannel } from "./channels.js";

interface ChannelText {
  username: string;
  display_name: string;
  bio_en: string;
  live: boolean;
  /** The titles of its live streams, newest first, one a line. */
  live_titles: string;
  shown_at: Date;
}

/**
 * A channel as a search document (type `channel`, id its username, README "Search documents"): only while it has a
 * username; its public profile and, while live, its live streams' titles. No listing, key or owner id goes in.
 */
export const channelDocuments: SearchDocumentSource = {
  type: "channel",
  async describe(em, ids) {
    const rows = await sql<ChannelText>(
      em,
      `select c.username, c.display_name, c.bio_en,
              exists (select 1 from {streams} s where s.owner = c.owner and s.state = 'live') as live,
              coalesce((select string_agg(s.title, E'\\n' order by s.started_at desc nulls last, s.id)
                        from {streams} s where s.owner = c.owner and s.state = 'live' and s.title <> ''), '') as live_titles,
              coalesce(c.last_live_at, c.subject_at, c.updated_at) as shown_at
       from {channels} c where c.username in (?)`,
      [ids],
    );
    return new Map(rows.map((row) => [row.username, documentOf(row)]));
  },
  async ids(em, after, limit) {
    const rows = await sql<{ username: string }>(
      em,
      `select username from {channels} where username is not null and username > ? order by username limit ?`,
      [after, limit],
    );
    return rows.map((row) => row.username);
  },
};

function documentOf(row: ChannelText): IndexDocument {
  return publicDocument({
    title: row.display_name === "" ? `@${row.username}` : `${row.display_name} (@${row.username})`,
    body: [row.live_titles, row.bio_en].filter((text) => text !== "").join("\n\n"),
    // The bio is English by contract; every document is also indexed word for word.
    lang: "en",
    facets: { live: [String(row.live)] },
    publishedAt: new Date(row.shown_at),
  });
}

/**
 * The document ids of an owner's channel (its username, when it has one), its row locked until commit: changes of
 * one channel record its document in turn, each describing what the one before committed.
 */
export async function channelDocumentIds(em: EntityManager, owner: string): Promise<string[]> {
  const username = await lockChannel(em, owner);
  return username === null ? [] : [username];
}
