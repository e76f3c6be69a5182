import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { UniqueConstraintViolationException } from "@mikro-orm/postgresql";
import type { HostService } from "../../../gen/pf/host/v1/host_pb.js";
import { SiteManageResultSchema } from "../../../gen/pf/host/v1/projects_pb.js";
import { relatedActor } from "../../kit/auth/principal.js";
import { newId } from "../../kit/handler/ids.js";
import { pageBefore, pageLimit } from "../../kit/handler/paging.js";
import { problem } from "../../kit/handler/problem.js";
import type { HostContext } from "../context.js";
import { lockedProject, siteCount } from "../db/projects.js";
import { deleteSite, insertSite, lockedSite, siteById, sitesPage, siteToProto, slugInUse } from "../db/sites.js";
import { RESERVED_SLUGS } from "../domain/slugs.js";
import { hostSubjects, recordHostEvent } from "../events.js";
import { underReview } from "./projects.js";

type Handlers = Pick<ServiceImpl<typeof HostService>, "listSites" | "createSite" | "getSite" | "deleteSite">;

const slugTaken = (slug: string) =>
  problem(409, "host.slug_taken", `The slug "${slug}" is taken or reserved: choose another.`, { slug });

/** Sites of a project: list, create, read, delete. */
export function siteHandlers(ctx: HostContext): Handlers {
  const answered = (site: Parameters<typeof siteToProto>[0]) => siteToProto(site, ctx.settings);

  return {
    async listSites(request) {
      const limit = pageLimit(request.limit);
      const rows = await sitesPage(ctx.orm.em.fork(), request.id, request.before, limit + 1);
      const { items, nextBefore } = pageBefore(rows, limit);
      return create(SiteManageResultSchema, { sites: items.map(answered), nextBefore });
    },

    async createSite(request, call) {
      const actor = relatedActor(call);
      if (RESERVED_SLUGS.has(request.slug)) throw slugTaken(request.slug);
      try {
        return await ctx.transaction(async (em) => {
          // Locked: two creations at once cannot both pass the site quota.
          const project = await lockedProject(em, request.id);
          if (project.takenDownAt) throw underReview("The project");
          if ((await siteCount(em, project.id)) >= project.quotaSites)
            throw problem(422, "host.quota_exceeded", `The project's quota allows ${project.quotaSites} sites.`, {
              quota: "sites",
              limit: project.quotaSites,
            });
          if (await slugInUse(em, request.slug)) throw slugTaken(request.slug);
          const at = ctx.clock.now();
          const site = await insertSite(em, {
            id: newId("sit"),
            projectId: project.id,
            slug: request.slug,
            activeDeployId: null,
            createdAt: at,
            takenDownAt: null,
          });
          await recordHostEvent(em, hostSubjects.siteCreated, { projectId: project.id, siteId: site.id, actor, at });
          return create(SiteManageResultSchema, { site: answered(site), changed: true });
        });
      } catch (error) {
        // Another project's creation of the same slug committed between the check and the insert.
        if (error instanceof UniqueConstraintViolationException) throw slugTaken(request.slug);
        throw error;
      }
    },

    async getSite(request) {
      return create(SiteManageResultSchema, { site: answered(await siteById(ctx.orm.em.fork(), request.id)) });
    },

    async deleteSite(request, call) {
      const actor = relatedActor(call);
      return ctx.transaction(async (em) => {
        // The project first, as every writer locks them, then the site.
        const { projectId } = await siteById(em, request.id);
        const project = await lockedProject(em, projectId);
        const site = await lockedSite(em, request.id);
        if (site.takenDownAt) throw underReview("The site");
        if (project.takenDownAt) throw underReview("The project");
        const hostnames = await deleteSite(em, site);
        const at = ctx.clock.now();
        for (const hostname of hostnames)
          await recordHostEvent(em, hostSubjects.domainRemoved, { projectId, siteId: site.id, hostname, actor, at });
        await recordHostEvent(em, hostSubjects.siteDeleted, { projectId, siteId: site.id, actor, at });
        return create(SiteManageResultSchema, { site: answered(site), changed: true });
      });
    },
  };
}
