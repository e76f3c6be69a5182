import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  type NewsStoryService,
  RevisionListSchema,
  StoryCreateResultSchema,
  StoryListSchema,
  type StoryReadResult,
  StoryReadResultSchema,
} from "../../../gen/pf/news/v1/stories_pb.js";
import { actingPerson, callerOf } from "../../kit/auth/principal.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { decodeTextCursor, DEFAULT_LIMIT, page } from "../../kit/handler/paging.js";
import { problem } from "../../kit/handler/problem.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { revisionToProto } from "../db/answers.js";
import { clusterById, liveItemsOf } from "../db/clusters.js";
import { revisionOf, revisionsOf } from "../db/revisions.js";
import { insertStory, storyById, storyPage } from "../db/stories.js";
import { readable, storyToProto, viewOf } from "../db/story-view.js";
import { storyChanged, subjects } from "../events.js";
import { diffOf } from "../diff.js";

type StoryReadHandlers = Pick<
  ServiceImpl<typeof NewsStoryService>,
  "createStory" | "listStories" | "getStory" | "getDiff" | "listRevisions" | "getRevision"
>;

const read = (result: StoryReadResult["result"]) => create(StoryReadResultSchema, { result });
const notFound = () => problem(404, "story.not_found", "No such story.");

/** Story creation and the story reads. */
export function storyHandlers(ctx: ServiceContext): StoryReadHandlers {
  return {
    async createStory(request, call) {
      const editor = actingPerson(call);
      const once = idempotencyOf(call, request, { scope: `story:${editor}` });
      return ctx.transaction((em) =>
        once.run(em, async () => {
          const cluster = await clusterById(em, request.clusterId);
          if (!cluster) throw problem(404, "cluster.not_found", "No such cluster.", { field: "cluster_id" });
          if (cluster.state !== "active")
            throw problem(409, "cluster.merged", `The cluster is ${cluster.state}; open the story from an active one.`);
          const at = ctx.clock.now();
          const id = await insertStory(em, {
            cluster: cluster.id,
            by: editor,
            items: await liveItemsOf(em, cluster.id),
            at,
          });
          const story = (await storyById(em, id))!;
          await storyChanged(em, subjects.created, story, at);
          return create(StoryCreateResultSchema, { story: storyToProto(await viewOf(em, story), true) });
        }),
      );
    },

    async listStories(request, call) {
      const limit = request.limit ?? DEFAULT_LIMIT; // 1-200, declared
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const editor = callerOf(call).admittedBy === "editor";
      return ctx.transaction(async (em) => {
        const rows = await storyPage(em, { states: editor ? undefined : ["published", "retracted"], before, limit });
        const { items, nextCursor } = page(rows, limit, (row) => [row.id]);
        const stories = [];
        for (const row of items) stories.push(storyToProto(await viewOf(em, row), editor));
        return read({ case: "stories", value: create(StoryListSchema, { stories, nextCursor }) });
      });
    },

    async getStory(request, call) {
      const editor = callerOf(call).admittedBy === "editor";
      return ctx.transaction(async (em) => {
        const story = await storyById(em, request.id);
        if (!story || (!editor && !readable(story))) throw notFound();
        return read({ case: "story", value: storyToProto(await viewOf(em, story), editor) });
      });
    },

    async getDiff(request, call) {
      return ctx.transaction(async (em) => {
        const story = await storyById(em, request.id);
        if (!story) throw notFound();
        return read({ case: "diff", value: await diffOf(em, story, request.from, request.to) });
      });
    },

    async listRevisions(request, call) {
      return ctx.transaction(async (em) => {
        if (!(await storyById(em, request.id))) throw notFound();
        const revisions = (await revisionsOf(em, request.id)).map(revisionToProto);
        return read({ case: "revisions", value: create(RevisionListSchema, { revisions }) });
      });
    },

    async getRevision(request, call) {
      const editor = callerOf(call).admittedBy === "editor";
      return ctx.transaction(async (em) => {
        const story = await storyById(em, request.id);
        if (!story || (!editor && !readable(story))) throw notFound();
        // Anyone else reads only the published revision.
        const revision =
          editor || request.n === story.published_revision ? await revisionOf(em, story.id, request.n) : undefined;
        if (!revision) throw problem(404, "revision.not_found", `The story has no revision ${request.n}.`);
        return read({ case: "revision", value: revisionToProto(revision) });
      });
    },
  };
}
