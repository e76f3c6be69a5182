import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  type NewsSourcingService,
  PerspectiveUpdateResultSchema,
  SourceAttachResultSchema,
  TimelineUpdateResultSchema,
} from "../../../gen/pf/news/v1/sourcing_pb.js";
import { relatedActor } from "../../kit/auth/principal.js";
import { problem } from "../../kit/handler/problem.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { perspectivesToProto, sourceToProto, timelineToProto } from "../db/answers.js";
import { itemsById } from "../db/items.js";
import {
  attachSource,
  deletePerspective,
  deleteTimelineEntry,
  detachSource,
  insertPerspective,
  insertTimelineEntry,
  lockStory,
  perspectivesOf,
  type SourceRecord,
  setPerspective,
  sourcesOf,
  timelineOf,
  touchStory,
} from "../db/stories.js";

type SourcingHandlers = ServiceImpl<typeof NewsSourcingService>;

/** The live entry of an item in a story's table; 404 source.not_attached when none. */
function liveEntry(sources: SourceRecord[], item: string): SourceRecord {
  const entry = sources.find((s) => s.item_id === item && !s.detached_at);
  if (!entry) throw problem(404, "source.not_attached", "The item is not attached to this story.", { field: "item" });
  return entry;
}

/** The source table, perspective and timeline routes (editors; never AI output). */
export function sourcingHandlers(ctx: ServiceContext): SourcingHandlers {
  const sourcesAnswer = async (em: EntityManager, story: string, number: number) => {
    const sources = await sourcesOf(em, story);
    return create(SourceAttachResultSchema, {
      entry: sourceToProto(sources.find((s) => s.number === number)!),
      sources: sources.map(sourceToProto),
    });
  };
  const perspectivesAnswer = async (em: EntityManager, story: string, created?: string) => {
    const perspectives = perspectivesToProto(await perspectivesOf(em, story), await sourcesOf(em, story));
    return create(PerspectiveUpdateResultSchema, {
      perspective: perspectives.find((p) => p.id === created),
      perspectives,
    });
  };
  const timelineAnswer = async (em: EntityManager, story: string, created?: string) => {
    const timeline = (await timelineOf(em, story)).map(timelineToProto);
    return create(TimelineUpdateResultSchema, { entry: timeline.find((e) => e.id === created), timeline });
  };

  return {
    async attachSource(request, call) {
      const by = relatedActor(call);
      return ctx.transaction(async (em) => {
        // The story's lock orders concurrent attaches: each takes the next number, none is reused.
        const story = await lockStory(em, request.id);
        const item = (await itemsById(em, [request.item])).get(request.item);
        if (!item) throw problem(404, "source_item.not_found", "News has not received this item.", { field: "item" });
        if (item.removed_at)
          throw problem(409, "source_item.removed", "The item was removed upstream.", { field: "item" });
        if ((await sourcesOf(em, story.id)).some((s) => s.item_id === item.id && !s.detached_at))
          throw problem(409, "source.already_attached", "The item is already attached.", { field: "item" });
        const number = await attachSource(em, story, item.id, by, ctx.clock.now());
        return sourcesAnswer(em, story.id, number);
      });
    },

    async detachSource(request, call) {
      const by = relatedActor(call);
      return ctx.transaction(async (em) => {
        const story = await lockStory(em, request.id);
        const entry = liveEntry(await sourcesOf(em, story.id), request.item);
        await detachSource(em, story.id, entry.number, by, ctx.clock.now());
        return sourcesAnswer(em, story.id, entry.number);
      });
    },

    async addPerspective(request, call) {
      const by = relatedActor(call);
      const { label } = request; // not blank, at most 200 characters: declared
      return ctx.transaction(async (em) => {
        const story = await lockStory(em, request.id);
        const at = ctx.clock.now();
        const id = await insertPerspective(em, story.id, label, by, at);
        await touchStory(em, story.id, at);
        return perspectivesAnswer(em, story.id, id);
      });
    },

    async deletePerspective(request, call) {
      return ctx.transaction(async (em) => {
        const story = await lockStory(em, request.id);
        const at = ctx.clock.now();
        if (!(await deletePerspective(em, story.id, request.pid, at)))
          throw problem(404, "perspective.not_found", "No such perspective grouping on this story.");
        await touchStory(em, story.id, at);
        return perspectivesAnswer(em, story.id);
      });
    },

    async setSourcePerspective(request, call) {
      return ctx.transaction(async (em) => {
        const story = await lockStory(em, request.id);
        const entry = liveEntry(await sourcesOf(em, story.id), request.item);
        const target = request.perspectiveId;
        if (target !== "" && !(await perspectivesOf(em, story.id)).some((p) => p.id === target))
          throw problem(404, "perspective.not_found", "No such perspective grouping on this story.", {
            field: "perspective_id",
          });
        await setPerspective(em, story.id, entry.number, target || null);
        await touchStory(em, story.id, ctx.clock.now());
        return perspectivesAnswer(em, story.id);
      });
    },

    async addTimelineEntry(request, call) {
      const by = relatedActor(call);
      // Declared: date and text not blank, at most 64 and 2000 characters.
      const { date, text } = request;
      return ctx.transaction(async (em) => {
        const story = await lockStory(em, request.id);
        const rests = (await sourcesOf(em, story.id)).find((s) => s.number === request.sourceNumber);
        if (!rests || rests.detached_at || rests.removed_upstream)
          throw problem(
            422,
            "citation.unknown_source",
            `Source ${request.sourceNumber} is not attached to this story.`,
            {
              field: "source_number",
            },
          );
        const at = ctx.clock.now();
        const id = await insertTimelineEntry(em, { story: story.id, date, text, source: rests.number, by, at });
        await touchStory(em, story.id, at);
        return timelineAnswer(em, story.id, id);
      });
    },

    async deleteTimelineEntry(request, call) {
      return ctx.transaction(async (em) => {
        const story = await lockStory(em, request.id);
        const at = ctx.clock.now();
        if (!(await deleteTimelineEntry(em, story.id, request.eid, at)))
          throw problem(404, "timeline_entry.not_found", "No such timeline entry on this story.");
        await touchStory(em, story.id, at);
        return timelineAnswer(em, story.id);
      });
    },
  };
}
