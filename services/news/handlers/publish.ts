import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  type NewsStoryService,
  StoryPublishResultSchema,
  StoryRetractResultSchema,
} from "../../../gen/pf/news/v1/stories_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { problem } from "../../kit/handler/problem.js";
import { refreshSearchDocuments } from "../../kit/search-documents/record.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { publishNotes, resolveFlags, revisionOf } from "../db/revisions.js";
import { storyDocuments } from "../db/search.js";
import { lockStory, storyById, type StoryRecord, touchStory } from "../db/stories.js";
import { problemsOf, storyToProto, viewOf } from "../db/story-view.js";
import { storyChanged, subjects } from "../events.js";

type PublishHandlers = Pick<ServiceImpl<typeof NewsStoryService>, "publishStory" | "retractStory">;

/** Publication, unpublication and retraction: an editor named in X-PF-Subject. */
export function publishHandlers(ctx: ServiceContext): PublishHandlers {
  return {
    async publishStory(request, call) {
      return ctx.transaction(async (em) => {
        const story = await lockStory(em, request.id);
        const at = ctx.clock.now();
        if (request.unpublish) {
          if (story.state !== "published")
            throw problem(409, "story.not_published", "Only a published story is unpublished.");
          await changeState(em, story, { state: "unpublished" }, at);
          await storyChanged(em, subjects.unpublished, { id: story.id, state: "unpublished" }, at);
          return create(StoryPublishResultSchema, { story: await answer(em, story.id) });
        }
        const n = request.revision ?? story.latest_revision;
        const revision = n > 0 ? await revisionOf(em, story.id, n) : undefined;
        if (!revision)
          throw n === 0
            ? problem(409, "story.not_publishable", "The story has no revision yet.", { problems: ["no_source"] })
            : problem(404, "revision.not_found", `The story has no revision ${n}.`, { field: "revision" });
        if (story.state === "published" && story.published_revision === n)
          return create(StoryPublishResultSchema, { story: await answer(em, story.id) });
        // The gate reads the story as it is now: a source removed upstream or detached after the save refuses.
        const problems = problemsOf(await viewOf(em, story), revision);
        if (problems.length > 0)
          throw problem(409, "story.not_publishable", `Revision ${n} cannot be published: ${problems.join(", ")}.`, {
            problems,
            revision: n,
          });
        await resolveFlags(em, story.id, revision.answers_flags, n, at);
        await publishNotes(em, story.id, at);
        await changeState(em, story, { state: "published", published_revision: n, published_at: at }, at);
        await storyChanged(em, subjects.published, { id: story.id, state: "published" }, at, { revision: n });
        return create(StoryPublishResultSchema, { story: await answer(em, story.id) });
      });
    },

    async retractStory(request, call) {
      const editor = actingPerson(call);
      const { note } = request; // not blank, at most 2000 characters: declared
      return ctx.transaction(async (em) => {
        const story = await lockStory(em, request.id);
        if (story.state !== "published")
          throw problem(409, "story.not_published", "Only a published story is retracted.");
        const at = ctx.clock.now();
        await changeState(
          em,
          story,
          { state: "retracted", retraction_note: note, retracted_by: editor, retracted_at: at },
          at,
        );
        await storyChanged(em, subjects.retracted, { id: story.id, state: "retracted" }, at);
        return create(StoryRetractResultSchema, { story: await answer(em, story.id) });
      });
    },
  };
}

/** Changes the story and its search document in one transaction (published stories only are in search). */
async function changeState(em: EntityManager, story: StoryRecord, set: Partial<StoryRecord>, at: Date) {
  await touchStory(em, story.id, at, set);
  await refreshSearchDocuments(em, storyDocuments, [story.id], at);
}

async function answer(em: EntityManager, id: string) {
  return storyToProto(await viewOf(em, (await storyById(em, id))!), true);
}
