import { create } from "@bufbuild/protobuf";
import { PostWriteResultSchema, type PostWriteResult } from "../../gen/pf/space/v1/forum_pb.js";
import {
  type ModerationEntry,
  ModerationResultSchema,
  type ModerationResult,
} from "../../gen/pf/space/v1/internal_pb.js";
import { postToProto, type StoredPost } from "./db/posts.js";
import { threadToProto, type StoredThread } from "./db/threads.js";

/** What a write left: the thread, the post it wrote or changed, and the audit entry of a moderator's action. */
export interface Outcome {
  thread: StoredThread;
  post?: StoredPost;
  audit?: ModerationEntry;
}

/** space.post-write-result@1 of an outcome. */
export function writeResult(outcome: Outcome): PostWriteResult {
  return create(PostWriteResultSchema, {
    thread: threadToProto(outcome.thread),
    post: outcome.post && postToProto(outcome.post),
  });
}

/** The internal moderation result of an outcome. */
export function moderationResult(outcome: Outcome): ModerationResult {
  return create(ModerationResultSchema, {
    thread: threadToProto(outcome.thread),
    post: outcome.post && postToProto(outcome.post),
    audit: outcome.audit,
  });
}
