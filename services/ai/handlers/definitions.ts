import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import type { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import {
  DefinitionVersionResultSchema,
  type DefinitionVersionRequest,
  type DefinitionVersionResult,
} from "../../../gen/pf/ai/v1/definitions_pb.js";
import { callerOf } from "../../kit/auth/principal.js";
import { problem } from "../../kit/handler/problem.js";
import { decodeTextCursor, page, pageLimit } from "../../kit/handler/paging.js";
import type { AiContext } from "../context.js";
import { recordAudit } from "../db/audit.js";
import {
  definitionByKey,
  definitionToProto,
  definitionsPage,
  insertVersion,
  moveVersion,
  updateRouteStatus,
  versionByNumber,
  versionsOf,
  versionToProto,
  type StoredDefinition,
  type StoredVersion,
} from "../db/definitions.js";
import { checkBody, checkKey } from "../domain/definitions/bodies.js";
import {
  DEFINITION_KINDS,
  routeStatusOf,
  versionMove,
  versionStatusOf,
  type DefinitionKind,
  type VersionStatus,
} from "../domain/definitions/lifecycle.js";
import { aiSubjects, recordAdminEvent } from "../events.js";

type Handlers = Pick<
  ServiceImpl<typeof AiService>,
  | "createRouteVersion"
  | "setRouteVersionStatus"
  | "createPromptVersion"
  | "setPromptVersionStatus"
  | "createWorkflowVersion"
  | "setWorkflowVersionStatus"
  | "setRouteStatus"
  | "listDefinitions"
>;

type Handler = (request: DefinitionVersionRequest, call: HandlerContext) => Promise<DefinitionVersionResult>;

/**
 * Prompt templates, workflow definitions and routing profiles: insert-only versions whose status alone moves, one
 * active per key. Every change is audited, and every status change published, in the transaction that made it.
 */
export function definitionHandlers(ctx: AiContext): Handlers {
  /** The next version, a draft; 201 with it and its definition. */
  const createVersion =
    (kind: DefinitionKind): Handler =>
    async (request, call) => {
      checkKey(kind, request.key);
      checkBody(kind, request.body);
      const actor = callerOf(call).principal.sub;
      const at = ctx.clock.now();
      return ctx.transaction(async (em) => {
        const body = request.body!;
        const version = await insertVersion(em, {
          kind,
          key: request.key,
          body,
          note: request.note,
          createdBy: actor,
          at,
        });
        await recordAudit(em, {
          actor,
          action: `${kind}.version_created`,
          targetKind: kind,
          targetKey: request.key,
          before: null,
          after: { version: version.version, status: version.status, body, note: request.note },
          at,
        });
        return answer(em, (await definitionByKey(em, kind, request.key))!, version);
      });
    };

  /** A move along the lifecycle; activating one version deprecates the one active before, both audited. */
  const setVersionStatus =
    (kind: DefinitionKind): Handler =>
    async (request, call) => {
      const to = versionStatusOf(request.status);
      const actor = callerOf(call).principal.sub;
      const at = ctx.clock.now();
      return ctx.transaction(async (em) => {
        const definition = await definitionByKey(em, kind, request.key, true);
        const version = definition && (await versionByNumber(em, kind, request.key, request.version));
        if (!definition || !version)
          throw problem(
            404,
            "ai.definition.not_found",
            `There is no version ${request.version} of the ${kind} ${request.key}.`,
            {
              kind,
              key: request.key,
              version: request.version,
            },
          );
        if (!versionMove(version.status, to)) return answer(em, definition, version);
        const { moved, deprecated } = await moveVersion(em, version, to, actor, at);
        for (const row of deprecated) await recordMove(em, actor, at, row, "active");
        await recordMove(em, actor, at, moved, version.status);
        return answer(em, (await definitionByKey(em, kind, request.key))!, moved);
      });
    };

  return {
    createRouteVersion: createVersion("route"),
    setRouteVersionStatus: setVersionStatus("route"),
    createPromptVersion: createVersion("prompt"),
    setPromptVersionStatus: setVersionStatus("prompt"),
    createWorkflowVersion: createVersion("workflow"),
    setWorkflowVersionStatus: setVersionStatus("workflow"),

    /** `active` or `disabled`: a run needing a disabled route is refused (409 ai.route_disabled). */
    async setRouteStatus(request, call) {
      const status = routeStatusOf(request.status);
      const actor = callerOf(call).principal.sub;
      const at = ctx.clock.now();
      return ctx.transaction(async (em) => {
        const route = await definitionByKey(em, "route", request.key, true);
        if (!route)
          throw problem(404, "ai.route.not_found", `There is no routing profile ${request.key}.`, {
            route: request.key,
          });
        if (route.status === status) return answer(em, route);
        await updateRouteStatus(em, request.key, status, at);
        await recordAudit(em, {
          actor,
          action: status === "disabled" ? "route.disabled" : "route.enabled",
          targetKind: "route",
          targetKey: request.key,
          before: { status: route.status },
          after: { status },
          at,
        });
        await recordAdminEvent(em, aiSubjects.definitionStatusChanged, {
          targetKind: "route",
          targetKey: request.key,
          status,
          at,
        });
        return answer(em, (await definitionByKey(em, "route", request.key))!);
      });
    },

    /** By kind, then key; each definition with all its versions, oldest first. */
    async listDefinitions(request) {
      const limit = pageLimit(request.limit);
      const after = decodeTextCursor(request.cursor, 2) as [string, string] | undefined;
      const kind = request.kind === "" ? undefined : (request.kind as DefinitionKind);
      const em = ctx.orm.em.fork();
      const rows = await definitionsPage(em, kind, after, limit + 1);
      const { items, nextCursor } = page(rows, limit, (row) => [row.kind, row.key]);
      const versions = new Map<string, StoredVersion[]>();
      for (const each of DEFINITION_KINDS) {
        const keys = items.filter((row) => row.kind === each).map((row) => row.key);
        for (const version of await versionsOf(em, each, keys)) {
          const id = `${each}:${version.key}`;
          versions.set(id, [...(versions.get(id) ?? []), version]);
        }
      }
      return create(DefinitionVersionResultSchema, {
        definitions: items.map((row) => definitionToProto(row, versions.get(`${row.kind}:${row.key}`) ?? [])),
        nextCursor,
      });
    },
  };
}

/** A version's move, audited and published in the transaction that made it. */
async function recordMove(
  em: EntityManager,
  actor: string,
  at: Date,
  moved: StoredVersion,
  from: VersionStatus,
): Promise<void> {
  const { kind, key, version, status } = moved;
  await recordAudit(em, {
    actor,
    action: `${kind}.status_changed`,
    targetKind: kind,
    targetKey: key,
    before: { version, status: from },
    after: { version, status },
    at,
  });
  await recordAdminEvent(em, aiSubjects.definitionStatusChanged, {
    targetKind: kind,
    targetKey: key,
    version,
    status,
    at,
  });
}

/** A write's answer: the version it made or moved (none for a route's status) and its definition with its versions. */
async function answer(
  em: EntityManager,
  definition: StoredDefinition,
  version?: StoredVersion,
): Promise<DefinitionVersionResult> {
  const versions = await versionsOf(em, definition.kind, [definition.key]);
  return create(DefinitionVersionResultSchema, {
    version: version && versionToProto(version),
    definition: definitionToProto(definition, versions),
  });
}
