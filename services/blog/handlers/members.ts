import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { MemberResultSchema, type BlogService } from "../../../gen/pf/blog/v1/blogs_pb.js";
import { problem } from "../../kit/handler/problem.js";
import type { BlogContext } from "../context.js";
import { deleteMember, membersOf, ownerCount, roleOf, upsertMember } from "../db/blogs.js";
import type { BlogRow } from "../db/entities.js";
import { cancelSchedulesById, pendingSchedulesBy } from "../db/posts.js";
import type { Role } from "../domain/blogs.js";
import { mayEdit } from "../domain/posts.js";
import { loadBlog, postPerson } from "../ownership.js";
import { memberToProto } from "../views.js";

type MemberHandlers = Pick<ServiceImpl<typeof BlogService>, "listMembers" | "setMember" | "removeMember">;

/**
 * Members: owners only. The blog row is locked before the owners are counted, so two owners demoting or removing
 * each other at once run one after the other and the second finds the last owner: 409 blog.last_owner. A member
 * removed or demoted loses, in the same transaction, the pending schedules their role no longer allows.
 */
export function memberHandlers(ctx: BlogContext): MemberHandlers {
  async function refuseLastOwner(em: EntityManager, blog: BlogRow, subject: string): Promise<void> {
    if ((await roleOf(em, blog.id, subject)) === "owner" && (await ownerCount(em, blog.id)) <= 1)
      throw problem(409, "blog.last_owner", "A blog keeps at least one owner: make another owner first.");
  }

  async function answer(em: EntityManager, blog: BlogRow, subject?: string) {
    const members = await membersOf(em, blog.id);
    const member = members.find((row) => row.subject === subject);
    return create(MemberResultSchema, {
      member: member && memberToProto(member),
      members: members.map(memberToProto),
    });
  }

  return {
    async listMembers(request, call) {
      return ctx.transaction(async (em) => {
        const blog = await loadBlog(em, request.handle);
        return answer(em, blog);
      });
    },

    // The subject (usr_ or gst_) and the role are declared.
    async setMember(request, call) {
      const { subject } = request;
      const role = request.role as Role;
      return ctx.transaction(async (em) => {
        const blog = await loadBlog(em, request.handle, true);
        if (role !== "owner") await refuseLastOwner(em, blog, subject);
        else if (!subject.startsWith("usr_"))
          throw problem(403, "blog.user_required", "A guest cannot own a blog: owners are network users (usr_).");
        await upsertMember(em, { blogId: blog.id, subject, role, addedAt: ctx.clock.now() });
        await cancelSchedulesBeyond(em, blog, subject, role, ctx.clock.now());
        return answer(em, blog, subject);
      });
    },

    async removeMember(request, call) {
      const { subject } = request;
      return ctx.transaction(async (em) => {
        const blog = await loadBlog(em, request.handle, true);
        await refuseLastOwner(em, blog, subject);
        await deleteMember(em, blog.id, subject);
        await cancelSchedulesBeyond(em, blog, subject, undefined, ctx.clock.now());
        return answer(em, blog);
      });
    },
  };
}

/**
 * Cancels the person's pending schedules on the blog that `role` (undefined once removed) no longer lets them apply:
 * the right to schedule is the right to publish (authors their own posts, editors and owners every post).
 */
async function cancelSchedulesBeyond(
  em: EntityManager,
  blog: BlogRow,
  person: string,
  role: Role | undefined,
  at: Date,
): Promise<void> {
  const lost = (await pendingSchedulesBy(em, blog.id, person)).filter(
    ({ post }) => !mayEdit(role, person, postPerson(post)),
  );
  await cancelSchedulesById(
    em,
    lost.map(({ schedule }) => schedule.id),
    at,
  );
}
