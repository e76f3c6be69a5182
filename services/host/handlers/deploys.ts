import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { DeployCreateResultSchema } from "../../../gen/pf/host/v1/deploys_pb.js";
import type { HostService } from "../../../gen/pf/host/v1/host_pb.js";
import { SiteManageResultSchema } from "../../../gen/pf/host/v1/projects_pb.js";
import { relatedActor } from "../../kit/auth/principal.js";
import { pageBefore, pageLimit } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import type { HostContext } from "../context.js";
import { deployNotFound } from "../db/access.js";
import { deleteDeployRow, deployById, deployLog, deploysOfSite, deployToProto, pointSiteAt } from "../db/deploys.js";
import { projectById } from "../db/projects.js";
import { lockedSite } from "../db/sites.js";
import { hostSubjects, recordHostEvent } from "../events.js";
import { underReview } from "./projects.js";
import { uploadHandlers } from "./upload-deploy.js";

type Handlers = Pick<
  ServiceImpl<typeof HostService>,
  "uploadDeploy" | "listDeploys" | "getDeploy" | "deleteDeploy" | "activateDeploy" | "getDeployLog"
>;

const notReady = (state: string) =>
  problem(409, "host.deploy_not_ready", `Only a ready deploy can be activated; this one is ${state}.`);

/** Deploys: upload (upload-deploy.ts), list, read, delete, activate, log. */
export function deployHandlers(ctx: HostContext): Handlers {
  /** The deploy the path names (dep_), deleted or not. */
  const deployOf = async (id: string) => {
    if (!id.startsWith("dep_")) throw invalid("id", "The path names a deploy (dep_…).");
    const row = await deployById(ctx.orm.em.fork(), id);
    if (!row) throw deployNotFound();
    return row;
  };
  return {
    ...uploadHandlers(ctx),

    async listDeploys(request) {
      if (!request.id.startsWith("sit_")) throw invalid("id", "The path names a site (sit_…).");
      const limit = pageLimit(request.limit);
      const rows = await deploysOfSite(ctx.orm.em.fork(), request.id, request.before, limit + 1);
      const { items, nextBefore } = pageBefore(rows, limit);
      return create(DeployCreateResultSchema, { deploys: items.map(deployToProto), nextBefore });
    },

    async getDeploy(request) {
      return create(DeployCreateResultSchema, { deploy: deployToProto(await deployOf(request.id)) });
    },

    async getDeployLog(request) {
      const { id } = await deployOf(request.id);
      return create(DeployCreateResultSchema, { log: await deployLog(ctx.orm.em.fork(), id) });
    },

    /**
     * Under a lock of its site, so no activation points at it meanwhile: refused while active or under review; its
     * file rows go (the sweep frees their blobs); a second delete changes nothing.
     */
    async deleteDeploy(request, call) {
      const { siteId, state } = await deployOf(request.id);
      const actor = relatedActor(call);
      const { deploy, changed } = await ctx.transaction(async (em) => {
        // A deleted site took its deploys with it.
        if (state !== "deleted") {
          const site = await lockedSite(em, siteId);
          if (site.activeDeployId === request.id)
            throw problem(409, "host.deploy_active", "The site serves this deploy: activate another one first.");
          if (site.takenDownAt) throw underReview("The site");
          if ((await projectById(em, site.projectId)).takenDownAt) throw underReview("Its project");
        }
        const deleted = await deleteDeployRow(em, request.id);
        const row = (await deployById(em, request.id))!;
        if (deleted)
          await recordHostEvent(em, hostSubjects.deployDeleted, {
            projectId: row.projectId,
            siteId: row.siteId,
            deployId: row.id,
            actor,
            at: ctx.clock.now(),
          });
        return { deploy: row, changed: deleted };
      });
      return create(SiteManageResultSchema, { deploy: deployToProto(deploy), changed });
    },

    /**
     * One UPDATE of the site's pointer, guarded by the deploy being ready and the site's own, under a lock of the
     * site: activations of a site run one after another, and any earlier ready deploy is a rollback.
     */
    async activateDeploy(request, call) {
      const found = await deployOf(request.id);
      if (found.state !== "ready") throw notReady(found.state);
      const actor = relatedActor(call);
      const { deploy, changed } = await ctx.transaction(async (em) => {
        const site = await lockedSite(em, found.siteId);
        const moved = site.activeDeployId !== request.id;
        if (moved) {
          if (!(await pointSiteAt(em, site.id, request.id))) throw notReady((await deployById(em, request.id))!.state);
          await recordHostEvent(em, hostSubjects.deployActivated, {
            projectId: found.projectId,
            siteId: site.id,
            deployId: request.id,
            actor,
            at: ctx.clock.now(),
          });
        }
        return { deploy: (await deployById(em, request.id))!, changed: moved };
      });
      return create(DeployCreateResultSchema, { deploy: deployToProto(deploy), changed });
    },
  };
}
