import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { type ModerationEntry, ModerationEntrySchema } from "../../../gen/pf/space/v1/internal_pb.js";
import { sql } from "../../kit/db/sql.js";
import { newId } from "../../kit/handler/ids.js";

/** What a moderator did, to whom, who relayed it and why. */
export interface ModerationFacts {
  action: "edit_post" | "delete_post" | "pin" | "unpin" | "lock" | "unlock";
  threadId: string;
  postId: string;
  actor: string;
  relayedBy: string;
  reason: string;
  at: Date;
}

/** Records a moderation action in the change's transaction and answers its entry. */
export async function recordModeration(em: EntityManager, facts: ModerationFacts): Promise<ModerationEntry> {
  const id = newId("sma", facts.at.getTime());
  await sql(
    em,
    `insert into {moderation_audit} (id, action, thread_id, post_id, actor, relayed_by, reason, created_at)
       values (?, ?, ?, ?, ?, ?, ?, ?)`,
    [id, facts.action, facts.threadId, facts.postId, facts.actor, facts.relayedBy, facts.reason, facts.at],
  );
  return create(ModerationEntrySchema, { id, ...facts, createdAt: timestampFromDate(facts.at) });
}
