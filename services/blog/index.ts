import { BlogService } from "../../gen/pf/blog/v1/blogs_pb.js";
import { BlogContentService } from "../../gen/pf/blog/v1/content_pb.js";
import { PostService } from "../../gen/pf/blog/v1/posts_pb.js";
import { defineService } from "../kit/service/module.js";
import { implement } from "../kit/rpc/implementation.js";
import { SEARCH_DOCUMENT_WRITE, searchDocumentWorkers } from "../kit/search-documents/search-documents.js";
import { hideDeletedPostThread } from "./consumers/threads.js";
import { blogContext, type BlogContext } from "./context.js";
import { entities } from "./db/entities.js";
import { Migration20261127000000_blog } from "./db/migrations/Migration20261127000000_blog.js";
import { Migration20261229000000_blog_schedules_by } from "./db/migrations/Migration20261229000000_blog_schedules_by.js";
import { postDocuments } from "./db/search.js";
import { memberRoles } from "./member-roles.js";
import { blogHandlers } from "./handlers/blogs.js";
import { contentHandlers } from "./handlers/content.js";
import { feedHandlers } from "./handlers/feeds.js";
import { memberHandlers } from "./handlers/members.js";
import { postHandlers } from "./handlers/posts.js";
import { publicationHandlers } from "./handlers/publication.js";
import { readHandlers } from "./handlers/reads.js";
import { scheduler } from "./workers/scheduler.js";

/**
 * The blog service (spec part 2): member blogs with owners, editors and
 * authors; posts with immutable revisions, an AI gate, publication and
 * schedules; themes; public RSS, Atom and JSON feeds.
 */
export const blog = defineService({
  key: "blog",
  schema: {
    entities,
    migrations: [
      { name: "Migration20261127000000_blog", class: Migration20261127000000_blog },
      { name: "Migration20261229000000_blog_schedules_by", class: Migration20261229000000_blog_schedules_by },
    ],
  },
  context: blogContext,
  protos: [BlogService, PostService, BlogContentService],
  implementations: (ctx) => [
    implement(BlogService, { ...blogHandlers(ctx), ...memberHandlers(ctx), ...feedHandlers(ctx) }),
    implement(PostService, {
      ...postHandlers(ctx),
      ...readHandlers(ctx),
      ...publicationHandlers(ctx),
    }),
    implement(BlogContentService, contentHandlers(ctx)),
  ],
  holds: [
    "identity.subject.resolve",
    "vip.entitlement.check",
    "community.comment.write",
    "community.comment.moderate",
    SEARCH_DOCUMENT_WRITE,
    "ai.run.read",
  ],
  relations: memberRoles,
  consumers: [hideDeletedPostThread],
  workers: [scheduler, ...searchDocumentWorkers<BlogContext>({ sources: [postDocuments] })],
});
