import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { HostService } from "../../../gen/pf/host/v1/host_pb.js";
import { Environment, SiteManageResultSchema } from "../../../gen/pf/host/v1/projects_pb.js";
import { actingPerson, callerOf, relatedActor } from "../../kit/auth/principal.js";
import { newId } from "../../kit/handler/ids.js";
import { pageBefore, pageLimit } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { HostContext } from "../context.js";
import { membersOf, memberToProto } from "../db/members.js";
import {
  deleteProject,
  insertProject,
  lockedProject,
  projectById,
  projectsPage,
  projectToProto,
  siteCount,
} from "../db/projects.js";
import { hostSubjects, recordHostEvent } from "../events.js";

type Handlers = Pick<
  ServiceImpl<typeof HostService>,
  "listProjects" | "createProject" | "getProject" | "deleteProject"
>;

export const underReview = (what: string) =>
  problem(409, "host.under_review", `${what} is taken down for review: nothing under it changes until it is lifted.`);

/** Projects: list, create, read, delete. */
export function projectHandlers(ctx: HostContext): Handlers {
  return {
    async listProjects(request, call) {
      const limit = pageLimit(request.limit);
      const { person, principal } = callerOf(call);
      const filter = {
        principal: person ?? principal.sub,
        sandboxOnly: principal.env === "sandbox",
        before: request.before,
      };
      const { items, nextBefore } = pageBefore(await projectsPage(ctx.orm.em.fork(), filter, limit + 1), limit);
      return create(SiteManageResultSchema, {
        projects: items.map(({ project, role }) => projectToProto(project, { role })),
        nextBefore,
      });
    },

    async createProject(request, call) {
      const owner = actingPerson(call);
      if (!owner.startsWith("usr_"))
        throw problem(422, "host.owner_must_be_person", "A project is owned by a person (usr_).");
      const name = request.name?.trim() ?? "";
      if (name === "") throw invalid("name", "A project needs a name.");
      const sandboxToken = callerOf(call).principal.env === "sandbox";
      if (sandboxToken && request.environment === Environment.PRODUCTION)
        throw problem(403, "host.sandbox_refused", "A sandbox token creates sandbox projects only.");
      const sandbox = sandboxToken || request.environment === Environment.SANDBOX;
      const quota = ctx.settings.defaultQuota;
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const { project, owner: member } = await insertProject(em, {
          id: newId("prj"),
          name,
          createdBy: owner,
          environment: sandbox ? "sandbox" : "production",
          createdAt: at,
          quotaStorageBytes: quota.storageBytes,
          quotaDeployFiles: quota.deployFiles,
          quotaDeployBytes: quota.deployBytes,
          quotaFileBytes: quota.fileBytes,
          quotaSites: quota.sites,
          takenDownAt: null,
        });
        return create(SiteManageResultSchema, {
          project: projectToProto(project, { members: [memberToProto(member)], role: "owner" }),
          changed: true,
        });
      });
    },

    async getProject(request, call) {
      const em = ctx.orm.em.fork();
      const row = await projectById(em, request.id);
      const members = (await membersOf(em, row.id)).map(memberToProto);
      return create(SiteManageResultSchema, {
        project: projectToProto(row, { members, role: callerOf(call).relation?.role }),
      });
    },

    async deleteProject(request, call) {
      const actor = relatedActor(call);
      return ctx.transaction(async (em) => {
        const row = await lockedProject(em, request.id);
        if (row.takenDownAt) throw underReview("The project");
        if ((await siteCount(em, row.id)) > 0)
          throw problem(409, "host.project_not_empty", "Delete the project's sites first.");
        await deleteProject(em, row.id);
        await recordHostEvent(em, hostSubjects.projectDeleted, { projectId: row.id, actor, at: ctx.clock.now() });
        return create(SiteManageResultSchema, { project: projectToProto(row), changed: true });
      });
    },
  };
}
