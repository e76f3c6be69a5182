import { isEditor } from "../kit/editors/editors.js";
import type { ServiceContext } from "../kit/service/module.js";
import type { StoryRecord } from "./db/stories.js";
import { readable } from "./db/story-view.js";

/**
 * Whether a reader named by another service (community, for a story's comment thread) sees a story, as the story
 * read answers its own callers: published and retracted stories anyone, drafts and unpublished ones editor people
 * only. The reader is not the caller, so no access rule can declare it; the caller's own editing is the `editor`
 * relation the kit enforces.
 */
export async function storyOpenTo(ctx: ServiceContext, story: StoryRecord, reader: string): Promise<boolean> {
  return readable(story) || (reader !== "" && (await isEditor(ctx, reader)));
}
