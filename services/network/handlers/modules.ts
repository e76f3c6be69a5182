import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { UniqueConstraintViolationException } from "@mikro-orm/postgresql";
import { ModuleRecordSchema, type NetworkService } from "../../../gen/pf/network/v1/network_pb.js";
import { principalOf } from "../../kit/auth/principal.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { problem } from "../../kit/handler/problem.js";
import type { ModuleRecord } from "../db/entities.js";
import { changeModuleRecord, insertModuleRecord, moduleRecord } from "../db/modules.js";
import { ifMatchOf } from "../../kit/handler/revisions.js";
import { answerStatus } from "../../kit/handler/status.js";
import { mayRead, ownsNamespace } from "../domain/namespaces.js";
import { moduleWritten } from "../events.js";

const MAX_RECORD_BYTES = 64 * 1024;

/** Module records per subject and namespace, each write guarded by its revision. */
export function moduleHandlers(
  ctx: ServiceContext,
): Pick<ServiceImpl<typeof NetworkService>, "getModule" | "putModule"> {
  return {
    async getModule(request, call) {
      const { namespace, subject } = request;
      if (!mayRead(principalOf(call), namespace)) {
        throw problem(
          403,
          "modules.namespace_not_granted",
          `The namespace ${namespace} is not granted to this caller.`,
        );
      }
      const row = await moduleRecord(ctx.orm.em.fork(), namespace, subject);
      if (!row) throw problem(404, "modules.not_found", "No module record for this subject in this namespace.");
      return answer(row, call);
    },

    async putModule(request, call) {
      const { namespace, subject } = request;
      const principal = principalOf(call);
      if (!ownsNamespace(principal, namespace)) {
        throw problem(403, "modules.namespace_not_owned", `Only the service owning ${namespace} may write in it.`);
      }
      const record = request.record ?? {};
      if (Buffer.byteLength(JSON.stringify(record)) > MAX_RECORD_BYTES) {
        throw problem(413, "modules.too_large", `A module record holds at most ${MAX_RECORD_BYTES} bytes of JSON.`);
      }
      const ifMatch = ifMatchOf(call);
      const given = ifMatch ?? (request.expectedRevision > 0n ? request.expectedRevision : undefined);
      const row = await ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const writtenBy = principal.service!;
        const current = await moduleRecord(em, namespace, subject, true);
        // `*` matches whatever exists; a weak tag matches nothing.
        const expected = given === "any" ? (current?.revision ?? -1n) : given === "never" ? -1n : given;
        let written: ModuleRecord;
        if (current === null) {
          if (expected !== undefined && expected !== 0n) throw conflict(0n);
          // A concurrent first write fails on the primary key and answers as a conflict.
          written = await insertModuleRecord(em, {
            namespace,
            subject,
            revision: 1n,
            record,
            writtenBy,
            updatedAt: at,
          }).catch((error: unknown) => {
            throw error instanceof UniqueConstraintViolationException ? conflict(1n) : error;
          });
        } else {
          if (expected === undefined) {
            throw problem(428, "revision.required", "The record exists: send If-Match with its revision.", {
              revision: current.revision.toString(),
            });
          }
          if (expected !== current.revision) throw conflict(current.revision);
          written = await changeModuleRecord(em, current, {
            revision: current.revision + 1n,
            record,
            writtenBy,
            updatedAt: at,
          });
        }
        await moduleWritten(em, { namespace, subject, revision: written.revision, writtenBy, at });
        return written;
      });
      // Declared 200 (an update) first; a record's first write creates it.
      if (row.revision === 1n) answerStatus(call, 201);
      return answer(row, call);
    },
  };
}

function conflict(current: bigint) {
  return problem(412, "revision.conflict", "The record changed since that revision was read.", {
    revision: current.toString(),
  });
}

function answer(row: ModuleRecord, call: HandlerContext) {
  call.responseHeader.set("etag", `"${row.revision}"`);
  return create(ModuleRecordSchema, {
    namespace: row.namespace,
    subject: row.subject,
    record: row.record as JsonObject,
    revision: row.revision,
    updatedAt: timestampFromDate(row.updatedAt),
    writtenBy: row.writtenBy,
  });
}
