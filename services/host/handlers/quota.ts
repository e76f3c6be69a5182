import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { HostService } from "../../../gen/pf/host/v1/host_pb.js";
import { SiteManageResultSchema } from "../../../gen/pf/host/v1/projects_pb.js";
import type { HostContext } from "../context.js";
import { lockedProject, projectById, quotaToProto, saveProject, usageOf } from "../db/projects.js";

type Handlers = Pick<ServiceImpl<typeof HostService>, "getQuota" | "putQuota">;

/** A project's quota and usage: read (members), change (network staff). */
export function quotaHandlers(ctx: HostContext): Handlers {
  return {
    async getQuota(request) {
      const em = ctx.orm.em.fork();
      const row = await projectById(em, request.id);
      return create(SiteManageResultSchema, { quota: quotaToProto(row), usage: await usageOf(em, row.id) });
    },

    // A cap lowered below the usage keeps what is stored: uploads and site creation check it when they pass it.
    async putQuota(request) {
      return ctx.transaction(async (em) => {
        const row = await lockedProject(em, request.id);
        const asked = {
          quotaStorageBytes: request.storageBytes,
          quotaDeployFiles: request.deployFiles,
          quotaDeployBytes: request.deployBytes,
          quotaFileBytes: request.fileBytes,
          quotaSites: request.sites,
        };
        let changed = false;
        for (const [field, value] of Object.entries(asked) as [keyof typeof asked, bigint | number | undefined][]) {
          if (value === undefined || Number(value) === row[field]) continue;
          row[field] = Number(value);
          changed = true;
        }
        if (changed) await saveProject(em);
        return create(SiteManageResultSchema, { quota: quotaToProto(row), usage: await usageOf(em, row.id), changed });
      });
    },
  };
}
