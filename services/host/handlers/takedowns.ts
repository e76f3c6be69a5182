import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { HostService } from "../../../gen/pf/host/v1/host_pb.js";
import { SiteManageResultSchema } from "../../../gen/pf/host/v1/projects_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import type { HostContext } from "../context.js";
import { lockedProject, projectToProto, saveProject } from "../db/projects.js";
import { lockedSite, saveSite, siteToProto } from "../db/sites.js";
import { hostSubjects, recordHostEvent } from "../events.js";

type Handlers = Pick<
  ServiceImpl<typeof HostService>,
  "takeDownSite" | "restoreSite" | "takeDownProject" | "restoreProject"
>;

/** What a takedown writes on a site or project row: who, why and when; a lift clears it. */
interface TakenDown {
  takenDownAt?: Date | null;
  takenDownBy: string;
  takenDownReason: string;
}

/** Sets a takedown where there is none; answers whether it changed anything (a second takedown does not). */
function takeDown(row: TakenDown, by: string, reason: string, at: Date): boolean {
  if (row.takenDownAt) return false;
  Object.assign(row, { takenDownAt: at, takenDownBy: by, takenDownReason: reason.trim() });
  return true;
}

/** Clears a takedown; answers whether there was one. */
function lift(row: TakenDown): boolean {
  if (!row.takenDownAt) return false;
  Object.assign(row, { takenDownAt: null, takenDownBy: "", takenDownReason: "" });
  return true;
}

/**
 * Takedowns of a site or a whole project, and their lifts (network staff, found by the `network_staff` relation).
 * Serving instances drop what they cached of the site or project on the event, so it answers 451 everywhere at once.
 */
export function takedownHandlers(ctx: HostContext): Handlers {
  return {
    async takeDownSite(request, call) {
      const actor = actingPerson(call);
      return ctx.transaction(async (em) => {
        const site = await lockedSite(em, request.id);
        const at = ctx.clock.now();
        const changed = takeDown(site, actor, request.reason, at);
        if (changed) {
          await saveSite(em);
          const facts = { projectId: site.projectId, siteId: site.id, actor, at };
          await recordHostEvent(em, hostSubjects.siteTakenDown, facts);
        }
        return create(SiteManageResultSchema, { site: siteToProto(site, ctx.settings), changed });
      });
    },

    async restoreSite(request, call) {
      const actor = actingPerson(call);
      return ctx.transaction(async (em) => {
        const site = await lockedSite(em, request.id);
        const changed = lift(site);
        if (changed) {
          await saveSite(em);
          const facts = { projectId: site.projectId, siteId: site.id, actor, at: ctx.clock.now() };
          await recordHostEvent(em, hostSubjects.siteRestored, facts);
        }
        return create(SiteManageResultSchema, { site: siteToProto(site, ctx.settings), changed });
      });
    },

    async takeDownProject(request, call) {
      const actor = actingPerson(call);
      return ctx.transaction(async (em) => {
        const project = await lockedProject(em, request.id);
        const at = ctx.clock.now();
        const changed = takeDown(project, actor, request.reason, at);
        if (changed) {
          await saveProject(em);
          await recordHostEvent(em, hostSubjects.projectTakenDown, { projectId: project.id, actor, at });
        }
        return create(SiteManageResultSchema, { project: projectToProto(project), changed });
      });
    },

    async restoreProject(request, call) {
      const actor = actingPerson(call);
      return ctx.transaction(async (em) => {
        const project = await lockedProject(em, request.id);
        const changed = lift(project);
        if (changed) {
          await saveProject(em);
          await recordHostEvent(em, hostSubjects.projectRestored, {
            projectId: project.id,
            actor,
            at: ctx.clock.now(),
          });
        }
        return create(SiteManageResultSchema, { project: projectToProto(project), changed });
      });
    },
  };
}
