import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { BlogCreateResultSchema, BlogResultSchema, type BlogService } from "../../../gen/pf/blog/v1/blogs_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { newId } from "../../kit/handler/ids.js";
import { problem } from "../../kit/handler/problem.js";
import { answerStatus } from "../../kit/handler/status.js";
import { relayFailure } from "../../kit/rpc/relay-failure.js";
import type { BlogContext } from "../context.js";
import { blogFor, insertBlog, updateBlog } from "../db/blogs.js";
import type { BlogRow } from "../db/entities.js";
import { handleFromUsername, requireHandle } from "../domain/blogs.js";
import { blogCreated } from "../events.js";
import { isOfficial, loadBlog, requireOfficialForStaff } from "../ownership.js";
import { blogToProto } from "../views.js";

type BlogHandlers = Pick<ServiceImpl<typeof BlogService>, "createBlog" | "configureBlog" | "setTheme">;

export function blogHandlers(ctx: BlogContext): BlogHandlers {
  /**
   * The network username as a handle: the default when none is given (outside any transaction). A person network
   * does not know has no username (422 like an unusable one); network not answering is 503 network.unavailable.
   */
  async function defaultHandle(subject: string): Promise<string> {
    const username = await ctx.network.resolveIdentity({ subject }).then(
      ({ results }) => results[0]?.subject?.display?.handle ?? "",
      (error: unknown) => (ConnectError.from(error).code === Code.NotFound ? "" : relayFailure("network", error)),
    );
    const handle = handleFromUsername(username);
    if (handle === "") throw problem(422, "blog.handle_required", "Your username is no handle: give a handle.");
    return handle;
  }

  return {
    async createBlog(request, call) {
      const subject = actingPerson(call);
      // Title and description lengths and the language tag are declared; a handle given is normalised first.
      const { title, description, language } = request;
      const given = request.handle === "" ? undefined : requireHandle("handle", request.handle);
      const existing = await ctx.transaction((em) => blogFor(em, subject));
      if (existing) {
        answerStatus(call, 200);
        return create(BlogCreateResultSchema, {
          blog: blogToProto(existing, isOfficial(ctx, existing)),
          created: false,
        });
      }
      const handle = given ?? (await defaultHandle(subject));
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const row: BlogRow = {
          id: newId("blg", at.getTime()),
          handle,
          createdFor: subject,
          title: title || handle,
          description,
          language,
          theme: "vibe",
          feedRss: true,
          feedAtom: true,
          feedJson: true,
          feedItems: 20,
          feedFullText: true,
          revision: 1n,
          createdAt: at,
          updatedAt: at,
        };
        if (await insertBlog(em, row)) {
          await blogCreated(em, row);
          return create(BlogCreateResultSchema, { blog: blogToProto(row, isOfficial(ctx, row)), created: true });
        }
        // Lost a race for this subject (answer its blog), or the handle is another subject's.
        const mine = await blogFor(em, subject);
        if (!mine) throw problem(409, "blog.handle_taken", `The handle ${handle} is taken: give another.`);
        answerStatus(call, 200);
        return create(BlogCreateResultSchema, { blog: blogToProto(mine, isOfficial(ctx, mine)), created: false });
      });
    },

    async configureBlog(request, call) {
      // Each field sent changes; their lengths, the language tag and the item count (1-100) are declared.
      const changes: Partial<BlogRow> = {};
      if (request.title !== undefined) changes.title = request.title;
      if (request.description !== undefined) changes.description = request.description;
      if (request.language !== undefined) changes.language = request.language;
      const feed = request.feed;
      if (feed?.rss !== undefined) changes.feedRss = feed.rss;
      if (feed?.atom !== undefined) changes.feedAtom = feed.atom;
      if (feed?.jsonFeed !== undefined) changes.feedJson = feed.jsonFeed;
      if (feed?.itemCount !== undefined) changes.feedItems = feed.itemCount;
      if (feed?.fullText !== undefined) changes.feedFullText = feed.fullText;
      return ctx.transaction(async (em) => {
        const blog = await loadBlog(em, request.handle, true);
        requireOfficialForStaff(ctx, blog, call);
        if (Object.keys(changes).length > 0)
          await updateBlog(em, blog, { ...changes, revision: BigInt(blog.revision) + 1n, updatedAt: ctx.clock.now() });
        return create(BlogResultSchema, { blog: blogToProto(blog, isOfficial(ctx, blog)) });
      });
    },

    async setTheme(request, call) {
      // One of the spec's presets (declared): no custom CSS.
      const { theme } = request;
      return ctx.transaction(async (em) => {
        const blog = await loadBlog(em, request.handle, true);
        if (blog.theme !== theme)
          await updateBlog(em, blog, { theme, revision: BigInt(blog.revision) + 1n, updatedAt: ctx.clock.now() });
        return create(BlogResultSchema, { blog: blogToProto(blog, isOfficial(ctx, blog)) });
      });
    },
  };
}
