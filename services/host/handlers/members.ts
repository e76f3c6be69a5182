import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { HostService } from "../../../gen/pf/host/v1/host_pb.js";
import { SiteManageResultSchema } from "../../../gen/pf/host/v1/projects_pb.js";
import { problem } from "../../kit/handler/problem.js";
import type { HostContext } from "../context.js";
import { memberOf, memberToProto, ownerCount, putMember, removeMember } from "../db/members.js";
import { lockedProject } from "../db/projects.js";

type Handlers = Pick<ServiceImpl<typeof HostService>, "putMember" | "deleteMember">;

const lastOwner = () => problem(409, "host.last_owner", "A project keeps at least one owner.");

/**
 * A project's members: put and remove (owner). The project row is locked first, so two owners stepping down at once
 * cannot leave it without one.
 */
export function memberHandlers(ctx: HostContext): Handlers {
  return {
    async putMember(request) {
      if (request.role === "owner" && !request.principal.startsWith("usr_"))
        throw problem(422, "host.owner_must_be_person", "An app is never an owner: add it as deployer or viewer.", {
          principal: request.principal,
        });
      return ctx.transaction(async (em) => {
        await lockedProject(em, request.id);
        const found = await memberOf(em, request.id, request.principal);
        if (found?.role === request.role)
          return create(SiteManageResultSchema, { member: memberToProto(found), changed: false });
        if (found?.role === "owner" && (await ownerCount(em, request.id)) === 1) throw lastOwner();
        const row = await putMember(em, {
          projectId: request.id,
          principal: request.principal,
          role: request.role,
          addedAt: found?.addedAt ?? ctx.clock.now(),
        });
        return create(SiteManageResultSchema, { member: memberToProto(row), changed: true });
      });
    },

    async deleteMember(request) {
      return ctx.transaction(async (em) => {
        await lockedProject(em, request.id);
        const found = await memberOf(em, request.id, request.principal);
        if (!found) return create(SiteManageResultSchema, { changed: false });
        if (found.role === "owner" && (await ownerCount(em, request.id)) === 1) throw lastOwner();
        await removeMember(em, found);
        return create(SiteManageResultSchema, { member: memberToProto(found), changed: true });
      });
    },
  };
}
