import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import {
  PasteCreateResultSchema,
  type PasteService,
  PasteWriteResultSchema,
} from "../../../gen/pf/community/v1/pastes_pb.js";
import { actingPerson } from "../../kit/auth/principal.js";
import { type AiRule, authorColumns, authorOf } from "../../kit/auth/authorship.js";
import { verifiedAuthor } from "../../kit/auth/ai-runs.js";
import { idempotencyOf } from "../../kit/writes/idempotency.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { rateLimit } from "../../kit/writes/rate-limit.js";
import { checkRevision, ifMatchOf } from "../../kit/handler/revisions.js";
import type { CommunityContext } from "../context.js";
import type { PasteRow } from "../db/entities.js";
import { changePaste, claimPasteSlug, insertPaste, pasteBySlug, pasteToProto } from "../db/pastes.js";
import { requireLanguage, requirePasteText, requireTitle, TEXT } from "../domain/text.js";

type PasteHandlers = Pick<ServiceImpl<typeof PasteService>, "createPaste" | "editPaste" | "deletePaste" | "forkPaste">;

/** The workflow AI output names when it derives a paste. */
export const DERIVE_PASTE: AiRule = { workflow: "community.derive_paste", code: "paste.workflow_required" };

/** Only the owner writes a paste: compared with the stored owner, never taken from the caller. */
export function requireOwner(row: PasteRow, person: string): void {
  if (row.owner !== person) throw problem(403, "paste.not_owner", "Only the paste's owner may do that.");
}

/**
 * Pastes: created for the acting person (or as AI output, with no person),
 * edited and deleted by their owner, forked by anyone into a paste of their own.
 */
export function pasteHandlers(ctx: CommunityContext): PasteHandlers {
  const { settings } = ctx;
  const limit = (em: EntityManager, person: string, at: Date) =>
    rateLimit(em, [{ name: "community.paste.person", key: person, ...settings.pastePerPerson }], at);

  const result = async (em: EntityManager, row: PasteRow, call: HandlerContext) =>
    create(PasteWriteResultSchema, { paste: await pasteToProto(em, row, { person: actingPerson(call) }) });

  return {
    async createPaste(request, call) {
      const claimed = authorOf(call, request, DERIVE_PASTE);
      const title = requireTitle("title", request.title, TEXT.title);
      // text (the default) or screenshot: the contract admits no other.
      const kind = (request.kind || "text") as "text" | "screenshot";
      const body = kind === "text" ? requirePasteText(request.body, settings.pasteMaxBytes) : "";
      if (kind === "screenshot" && request.body !== "") throw invalid("body", "A screenshot paste has no text.");
      if (kind === "screenshot" && !/^[\x21-\x7e]{1,128}$/.test(request.screenshot))
        throw invalid("screenshot", "A screenshot paste names its media object.");
      if (kind === "text" && request.screenshot !== "") throw invalid("screenshot", "A text paste has no screenshot.");
      const language = requireLanguage(request.language);
      const author = await verifiedAuthor(ctx.ai, claimed, DERIVE_PASTE);
      const owner = author.kind === "person" ? author.person : null;
      // AI output is counted and keyed by its service: it has no person.
      const writer = owner ?? (author.kind === "ai" ? author.service : "");
      const once = idempotencyOf(call, request, { scope: `paste:${writer}` });
      return ctx.transaction((em) =>
        once.run(em, async () => {
          const at = ctx.clock.now();
          await limit(em, writer, at);
          const row = await insertPaste(em, {
            title,
            kind,
            body,
            screenshot: kind === "screenshot" ? request.screenshot : null,
            language,
            ...authorColumns(author),
            owner,
            forkedFrom: null,
            state: "active",
            censorReason: null,
            likes: 0,
            copies: 0,
            forks: 0,
            revision: 1,
            createdAt: at,
            updatedAt: at,
          });
          return create(PasteCreateResultSchema, {
            paste: await pasteToProto(em, row, { person: owner ?? undefined }),
          });
        }),
      );
    },

    async editPaste(request, call) {
      const person = actingPerson(call);
      const title = request.title === "" ? undefined : requireTitle("title", request.title, TEXT.title);
      const language = requireLanguage(request.language);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const { row } = await pasteBySlug(em, request.slug, true);
        requireOwner(row, person);
        if (row.state === "censored")
          throw problem(409, "paste.censored", "Staff censored this paste: it can no longer be edited.");
        checkRevision(BigInt(row.revision), request.expectedRevision, ifMatchOf(call));
        if (row.kind === "text" && request.body !== "")
          row.body = requirePasteText(request.body, settings.pasteMaxBytes);
        if (row.kind === "screenshot" && request.body !== "") throw invalid("body", "A screenshot paste has no text.");
        if (title !== undefined && title !== row.title) {
          row.title = title;
          row.slug = await claimPasteSlug(em, row.id, title, at);
        }
        await changePaste(em, row, { language, revision: row.revision + 1, updatedAt: at });
        return result(em, row, call);
      });
    },

    async deletePaste(request, call) {
      const person = actingPerson(call);
      return ctx.transaction(async (em) => {
        const { row } = await pasteBySlug(em, request.slug, true);
        requireOwner(row, person);
        await changePaste(em, row, { state: "deleted", updatedAt: ctx.clock.now() });
        return result(em, row, call);
      });
    },

    async forkPaste(request, call) {
      const person = actingPerson(call);
      const title = request.title === "" ? undefined : requireTitle("title", request.title, TEXT.title);
      const once = idempotencyOf(call, request, { scope: `fork:${person}` });
      return ctx.transaction((em) =>
        once.run(em, async () => {
          const at = ctx.clock.now();
          await limit(em, person, at);
          const { row: parent } = await pasteBySlug(em, request.slug, true);
          if (parent.state !== "active") throw problem(409, "paste.censored", "A censored paste cannot be forked.");
          parent.forks += 1;
          const row = await insertPaste(em, {
            title: title ?? parent.title,
            kind: parent.kind,
            body: parent.body,
            screenshot: parent.screenshot,
            language: parent.language,
            ...authorColumns({ kind: "person", person }),
            owner: person,
            forkedFrom: parent.id,
            state: "active",
            censorReason: null,
            likes: 0,
            copies: 0,
            forks: 0,
            revision: 1,
            createdAt: at,
            updatedAt: at,
          });
          return result(em, row, call);
        }),
      );
    },
  };
}
