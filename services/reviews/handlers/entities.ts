import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  type EntityManageRequest,
  EntityManageResultSchema,
  EntityResolveResultSchema,
} from "../../../gen/pf/reviews/v1/envelopes_pb.js";
import type { ReviewsService } from "../../../gen/pf/reviews/v1/entities_pb.js";
import { relatedActor } from "../../kit/auth/principal.js";
import { newId } from "../../kit/handler/ids.js";
import { decodeTextCursor, DEFAULT_LIMIT, page } from "../../kit/handler/paging.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { answerRedirect } from "../../kit/handler/status.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { claimSlug, dropSlugs } from "../../kit/slugs/slugs.js";
import { aggregateAnswer, entityAnswer, historyToProto, revisionToProto, signalToProto } from "../db/answers.js";
import {
  aliasOwner,
  changeEntity,
  deleteAliasesOf,
  ENTITY_SLUGS,
  type EntityChanges,
  entityByRef,
  historyPage,
  insertAlias,
  insertEntity,
  mergedFrom,
  recordHistory,
  treeOf,
} from "../db/catalog.js";
import type { EntityRow } from "../db/entities.js";
import { signalsOf } from "../db/signals.js";
import { APPROVED_STATES, publishedOf, revisionsOf } from "../db/summaries.js";
import { type AliasKind, nameKey, normalizeAlias } from "../domain/identifiers.js";
import { entityChanged } from "../events.js";
import { resolve } from "../db/resolve.js";
import { refreshEntities } from "../db/search.js";
import { entityNotFound, entityOf, requireActive, requireRef } from "../entity-refs.js";

type EntityHandlers = Pick<
  ServiceImpl<typeof ReviewsService>,
  "resolveEntities" | "createEntity" | "getEntity" | "updateEntity" | "deleteEntity" | "getAggregate" | "getHistory"
>;

const PAGE_PARTS = 50;

/** Entities: resolution, the entity page, create, edit and rename, delete, aggregate and history. */
export function entityHandlers(ctx: ServiceContext): EntityHandlers {
  /** The entity page: the entity, its aggregate over its tree, signals, the published summary, approved revisions, history. */
  const pageOf = async (em: EntityManager, row: EntityRow) => {
    const tree = await treeOf(em, row.id);
    const [entity, aggregate, signals, published, revisions, history] = await Promise.all([
      entityAnswer(em, row),
      aggregateAnswer(em, row.id, tree),
      signalsOf(em, tree, PAGE_PARTS - 1),
      publishedOf(em, row.id),
      revisionsOf(em, row.id, APPROVED_STATES),
      historyPage(em, row.id, PAGE_PARTS - 1),
    ]);
    return {
      entity,
      aggregate,
      signals: signals.slice(0, PAGE_PARTS).map(signalToProto),
      summary: published ? revisionToProto(published) : undefined,
      summaryRevisions: revisions.map(revisionToProto),
      history: history.slice(0, PAGE_PARTS).map(historyToProto),
    };
  };

  const readEntity = async (ref: string) => {
    const em = ctx.orm.em.fork();
    return { em, row: await entityOf(em, requireRef("ref", ref)) };
  };

  return {
    async resolveEntities(request) {
      const resolution = await resolve(ctx.orm.em.fork(), request);
      return create(EntityResolveResultSchema, { result: { case: "resolution", value: resolution } });
    },

    async createEntity(request, call) {
      // Declared: a name not blank, at most 200 characters (an edit may leave it out: required here), a description
      // at most 20000, each alias's kind.
      if (request.name === "") throw invalid("name", "name is required");
      const name = request.name.trim();
      const { description } = request;
      const aliases = request.aliases.map((alias, i) => {
        const kind = alias.kind as AliasKind;
        return {
          kind,
          value: alias.value.trim(),
          normalized: normalizeAlias(`aliases[${i}].value`, kind, alias.value),
        };
      });
      const by = relatedActor(call);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const id = newId("ent");
        const slug = await claimSlug(em, ENTITY_SLUGS, id, request.slug.trim() || name, { at });
        const row = await insertEntity(em, { id, slug, name, nameKey: nameKey(name), description, by, at });
        for (const [i, alias] of aliases.entries()) {
          const owner = alias.kind === "name" ? null : await aliasOwner(em, alias.kind, alias.normalized);
          if (owner) throw aliasConflict(`aliases[${i}].value`, alias.kind, owner.entityId);
          await insertAlias(em, { entityId: id, ...alias, by, at });
        }
        await recordHistory(em, { entityId: id, action: "created", actor: by, at, detail: `created as ${slug}` });
        await entityChanged(em, { entityId: id, action: "created", actor: by, at });
        await refreshEntities(em, [id], at);
        return create(EntityManageResultSchema, { result: { case: "entity", value: await entityAnswer(em, row) } });
      });
    },

    async getEntity(request, call) {
      const ref = requireRef("ref", request.ref);
      const em = ctx.orm.em.fork();
      const found = await entityByRef(em, ref);
      if (!found) throw entityNotFound(ref);
      if (found.moved) {
        answerRedirect(call, `/reviews/api/v1/entities/${found.row.slug}`);
        return create(EntityResolveResultSchema, {});
      }
      return create(EntityResolveResultSchema, { result: { case: "page", value: await pageOf(em, found.row) } });
    },

    async updateEntity(request, call) {
      const ref = requireRef("ref", request.ref);
      // Empty keeps each; what is sent is declared (name not blank, at most 200 characters, description 20000).
      const name = request.name === "" ? undefined : request.name.trim();
      const description = request.description === "" ? undefined : request.description;
      const slug = request.slug.trim();
      if (name === undefined && description === undefined && slug === "")
        throw invalid("name", "nothing to change: name, description or slug");
      const by = relatedActor(call);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const row = requireActive(await entityOf(em, ref, true));
        const changes: string[] = [];
        const columns: EntityChanges = {};
        if (name !== undefined && name !== row.name) {
          changes.push(`name "${row.name}" → "${name}"`);
          Object.assign(columns, { name, nameKey: nameKey(name) });
        }
        if (description !== undefined && description !== row.description) {
          changes.push("description");
          columns.description = description;
        }
        if (slug !== "") {
          const claimed = await claimSlug(em, ENTITY_SLUGS, row.id, slug, { at });
          if (claimed !== row.slug) {
            changes.push(`slug ${row.slug} → ${claimed}`);
            await recordHistory(em, {
              entityId: row.id,
              action: "renamed",
              actor: by,
              at,
              detail: `${row.slug} → ${claimed}`,
            });
            await entityChanged(em, { entityId: row.id, action: "renamed", actor: by, at });
            columns.slug = claimed;
          }
        }
        if (changes.length > 0) {
          await changeEntity(em, row, columns, at);
          await recordHistory(em, { entityId: row.id, action: "updated", actor: by, at, detail: changes.join("; ") });
          await entityChanged(em, { entityId: row.id, action: "updated", actor: by, at });
          await refreshEntities(em, [row.id], at);
        }
        return create(EntityManageResultSchema, { result: { case: "entity", value: await entityAnswer(em, row) } });
      });
    },

    async deleteEntity(request: EntityManageRequest, call: HandlerContext) {
      const ref = requireRef("ref", request.ref);
      const by = relatedActor(call);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const row = requireActive(await entityOf(em, ref, true));
        const children = (await mergedFrom(em, [row.id])).get(row.id) ?? [];
        if (children.length > 0)
          throw problem(409, "entity.has_merged", `Entities are merged into ${row.id}; split them first.`, {
            merged_from: children,
          });
        await changeEntity(em, row, { state: "deleted" }, at);
        await deleteAliasesOf(em, row.id);
        await dropSlugs(em, ENTITY_SLUGS, row.id);
        await recordHistory(em, { entityId: row.id, action: "deleted", actor: by, at, detail: "" });
        await entityChanged(em, { entityId: row.id, action: "deleted", actor: by, at });
        await refreshEntities(em, [row.id], at);
        return create(EntityManageResultSchema, { result: { case: "deleted", value: { id: row.id } } });
      });
    },

    async getAggregate(request) {
      const { em, row } = await readEntity(request.ref);
      const aggregate = await aggregateAnswer(em, row.id, await treeOf(em, row.id));
      return create(EntityResolveResultSchema, { result: { case: "aggregate", value: aggregate } });
    },

    async getHistory(request) {
      const limit = request.limit ?? DEFAULT_LIMIT; // 1-200, declared
      const before = decodeTextCursor(request.cursor, 1)?.[0];
      const { em, row } = await readEntity(request.ref);
      const { items, nextCursor } = page(await historyPage(em, row.id, limit, before), limit, (entry) => [entry.id]);
      return create(EntityResolveResultSchema, {
        result: { case: "history", value: { entries: items.map(historyToProto), nextCursor } },
      });
    },
  };
}

/** 409 alias.conflict: an identifier already on another entity is never re-pointed. */
export function aliasConflict(field: string, kind: string, owner: string): Error {
  return problem(409, "alias.conflict", `This ${kind} already belongs to ${owner}.`, { field, entity_id: owner });
}
