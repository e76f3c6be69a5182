import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  AdminResultSchema,
  ImportHoldListSchema,
  type BillingAdminService,
} from "../../../../gen/pf/billing/v1/admin_pb.js";
import { principalOf } from "../../../kit/auth/principal.js";
import { decodeTextCursor, DEFAULT_LIMIT, page } from "../../../kit/handler/paging.js";
import { invalid } from "../../../kit/handler/problem.js";
import type { BillingContext } from "../../context.js";
import { importHoldsPage, importHoldToProto, releaseImportHold } from "../../db/import-holds.js";

type ImportHoldHandlers = Pick<ServiceImpl<typeof BillingAdminService>, "listImportHolds" | "releaseImportHold">;

const STATUSES = new Set(["held", "released"]);

/** Import holds (billing.ledger.admin): listed newest first, released once into the balance they were imported for. */
export function importHoldHandlers(ctx: BillingContext): ImportHoldHandlers {
  return {
    async listImportHolds(request) {
      if (request.status !== "" && !STATUSES.has(request.status))
        throw invalid("status", "status is held or released.");
      const limit = request.limit ?? DEFAULT_LIMIT; // 1-200, declared
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const rows = await importHoldsPage(ctx.orm.em.fork(), request.status || undefined, before, limit + 1);
      const { items, nextCursor } = page(rows, limit, (row) => [row.id]);
      return create(AdminResultSchema, {
        result: {
          case: "importHolds",
          value: create(ImportHoldListSchema, { importHolds: items.map(importHoldToProto), nextCursor }),
        },
      });
    },

    async releaseImportHold(request, call) {
      const principal = principalOf(call);
      const { reason } = request; // at most 500 characters: declared
      const row = await ctx.transaction((em) =>
        releaseImportHold(em, request.id, { reason, by: principal.sub, at: ctx.clock.now() }),
      );
      return create(AdminResultSchema, { result: { case: "importHold", value: importHoldToProto(row) } });
    },
  };
}
