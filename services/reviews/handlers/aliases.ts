import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { EntityManageResultSchema } from "../../../gen/pf/reviews/v1/envelopes_pb.js";
import type { ReviewsService } from "../../../gen/pf/reviews/v1/entities_pb.js";
import { relatedActor } from "../../kit/auth/principal.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { answerStatus } from "../../kit/handler/status.js";
import { maxLength } from "../../kit/handler/text.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { entityAnswer } from "../db/answers.js";
import {
  aliasOwner,
  changeEntity,
  deleteAlias,
  deleteLink,
  type EntityChanges,
  insertAlias,
  insertLink,
  recordHistory,
} from "../db/catalog.js";
import type { EntityRow } from "../db/entities.js";
import { refreshEntities } from "../db/search.js";
import { type AliasKind, normalizeAlias } from "../domain/identifiers.js";
import { entityChanged } from "../events.js";
import { aliasConflict } from "./entities.js";
import { entityOf, requireActive, requireRef } from "../entity-refs.js";

type AliasHandlers = Pick<
  ServiceImpl<typeof ReviewsService>,
  "addAlias" | "removeAlias" | "addLink" | "removeLink" | "putNotes" | "putBinding"
>;

const NOTE_MAX = 4000;

/** Aliases, source bindings, typed links and trust notes: editorial actions on an active entity. */
export function aliasHandlers(ctx: ServiceContext): AliasHandlers {
  /**
   * Runs an editorial change on an active entity under its row lock: `work`
   * answers what it did (and the entity's columns it changes), or nothing
   * when nothing changed; the change is recorded in history and as the event.
   */
  const change = async (
    ref: string,
    by: string,
    work: (
      em: EntityManager,
      row: EntityRow,
      at: Date,
    ) => Promise<{ action: string; detail: string; columns?: EntityChanges } | undefined>,
  ) =>
    ctx.transaction(async (em) => {
      const at = ctx.clock.now();
      const row = requireActive(await entityOf(em, ref, true));
      const done = await work(em, row, at);
      if (done) {
        const { columns, ...entry } = done;
        await changeEntity(em, row, columns ?? {}, at);
        await recordHistory(em, { entityId: row.id, actor: by, at, ...entry });
        await entityChanged(em, { entityId: row.id, action: "updated", actor: by, at });
        await refreshEntities(em, [row.id], at);
      }
      return create(EntityManageResultSchema, { result: { case: "entity", value: await entityAnswer(em, row) } });
    });

  /** Adds an alias unless the entity has it (then nothing changes); another entity's identifier is 409. */
  const addAliasTo = (
    em: EntityManager,
    row: EntityRow,
    kind: AliasKind,
    value: string,
    field: string,
    by: string,
    at: Date,
  ) => {
    const normalized = normalizeAlias(field, kind, value);
    return (async () => {
      const owner = kind === "name" ? null : await aliasOwner(em, kind, normalized);
      if (owner && owner.entityId !== row.id) throw aliasConflict(field, kind, owner.entityId);
      const { created } = await insertAlias(em, { entityId: row.id, kind, value: value.trim(), normalized, by, at });
      return created
        ? { action: kind === "source" ? "bound" : "alias_added", detail: `${kind} ${value.trim()}` }
        : undefined;
    })();
  };

  return {
    async addAlias(request, call) {
      const ref = requireRef("ref", request.ref);
      const kind = request.aliasKind as AliasKind; // one of the kinds: declared
      normalizeAlias("alias", kind, request.alias);
      const by = relatedActor(call);
      return change(ref, by, (em, row, at) => addAliasTo(em, row, kind, request.alias, "alias", by, at));
    },

    async removeAlias(request, call) {
      const ref = requireRef("ref", request.ref);
      const by = relatedActor(call);
      return change(ref, by, async (em, row) => {
        const alias = await deleteAlias(em, row.id, request.id);
        if (!alias) throw problem(404, "alias.not_found", `${row.id} has no alias ${request.id}.`, { id: request.id });
        return { action: "alias_removed", detail: `${alias.kind} ${alias.value}` };
      });
    },

    async putBinding(request, call) {
      const ref = requireRef("ref", request.ref);
      normalizeAlias("source", "source", request.source);
      const by = relatedActor(call);
      return change(ref, by, async (em, row, at) => {
        const done = await addAliasTo(em, row, "source", request.source, "source", by, at);
        if (!done) answerStatus(call, 200);
        return done;
      });
    },

    async addLink(request, call) {
      const ref = requireRef("ref", request.ref);
      // link_type is a lowercase word (declared); exactly one target.
      const targetRef = request.targetRef;
      const target = request.target.trim();
      if ((target === "") === !targetRef)
        throw invalid("target", "exactly one of target (an entity) or target_ref is required");
      if (targetRef && (!targetRef.service || !targetRef.kind || !targetRef.id))
        throw invalid("target_ref", "target_ref names a service, a kind and an id");
      const by = relatedActor(call);
      return change(ref, by, async (em, row, at) => {
        const targetEntity = target === "" ? "" : (await entityOf(em, target)).id;
        if (targetEntity === row.id) throw invalid("target", "an entity does not link to itself");
        await insertLink(em, {
          entityId: row.id,
          type: request.linkType,
          targetEntity,
          targetService: targetRef?.service ?? "",
          targetKind: targetRef?.kind ?? "",
          targetId: targetRef?.id ?? "",
          by,
          at,
        });
        const to = targetEntity || `${targetRef!.service}/${targetRef!.kind}/${targetRef!.id}`;
        return { action: "link_added", detail: `${request.linkType} ${to}` };
      });
    },

    async removeLink(request, call) {
      const ref = requireRef("ref", request.ref);
      const by = relatedActor(call);
      return change(ref, by, async (em, row) => {
        const link = await deleteLink(em, row.id, request.id);
        if (!link) throw problem(404, "link.not_found", `${row.id} has no link ${request.id}.`, { id: request.id });
        return { action: "link_removed", detail: `${link.type} ${link.targetEntity || link.targetId}` };
      });
    },

    async putNotes(request, call) {
      const ref = requireRef("ref", request.ref);
      const limitation = maxLength("limitation", request.limitation.trim(), NOTE_MAX);
      const verification = maxLength("verification", request.verification.trim(), NOTE_MAX);
      const by = relatedActor(call);
      return change(ref, by, async (_em, row, at) => {
        if (row.limitation === limitation && row.verification === verification) return undefined;
        return {
          action: "notes_changed",
          detail: "limitation and verification notes",
          columns: { limitation, verification, notesUpdatedBy: by, notesUpdatedAt: at },
        };
      });
    },
  };
}
