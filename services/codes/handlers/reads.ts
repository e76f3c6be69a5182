import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { CodesService } from "../../../gen/pf/codes/v1/codes_pb.js";
import { ReleasePageSchema, ReleaseReadResultSchema } from "../../../gen/pf/codes/v1/releases_pb.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import { problem } from "../../kit/handler/problem.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { publicRelease, publicReleasesOf, releaseAnswer } from "../db/releases.js";
import { trustOf } from "../db/trust.js";

type ReadHandlers = Pick<ServiceImpl<typeof CodesService>, "listReleases" | "getRelease" | "getTrust">;

/**
 * Public reads, no token needed: published, deprecated and revoked releases
 * with the app's trust tier. Drafts are never returned, to anyone, the owning
 * app included: a draft's id answers 404 as a missing one does.
 */
export function readHandlers(ctx: ServiceContext): ReadHandlers {
  return {
    async listReleases(request) {
      // app is held to its shape by the contract's rules.
      const app = request.app;
      const limit = pageLimit(request.limit);
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const em = ctx.orm.em.fork();
      const trust = await trustOf(em, app);
      const rows = await publicReleasesOf(em, app, before, limit + 1);
      const { items, nextCursor } = page(rows, limit, (row) => [row.id]);
      const releases = items.map((row) => releaseAnswer(row, trust.tier));
      return create(ReleaseReadResultSchema, {
        result: { case: "releases", value: create(ReleasePageSchema, { app, trust, releases, nextCursor }) },
      });
    },

    async getRelease(request) {
      const em = ctx.orm.em.fork();
      const row = await publicRelease(em, request.id);
      if (!row) throw problem(404, "codes.release_not_found", `There is no release ${request.id}.`, { id: request.id });
      const { tier } = await trustOf(em, row.app);
      return create(ReleaseReadResultSchema, { result: { case: "release", value: releaseAnswer(row, tier) } });
    },

    async getTrust(request) {
      const trust = await trustOf(ctx.orm.em.fork(), request.app);
      return create(ReleaseReadResultSchema, { result: { case: "trust", value: trust } });
    },
  };
}
