import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { UniqueConstraintViolationException } from "@mikro-orm/postgresql";
import {
  RemoveStaffResponseSchema,
  SetGithubTokenResponseSchema,
  type NetworkAdminService,
} from "../../../gen/pf/network/v1/admin_pb.js";
import { ResolutionSchema, StaffEntrySchema } from "../../../gen/pf/network/v1/network_pb.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { requireSubject } from "../../kit/handler/subjects.js";
import { maxLength } from "../../kit/handler/text.js";
import type { NetworkContext } from "../context.js";
import { blocksOf, deleteBlock, insertBlock } from "../db/blocks.js";
import { insertLegacyId, legacyIdOf } from "../db/legacy-ids.js";
import { deleteSetting, saveSetting } from "../db/settings.js";
import { deleteStaffMember, networkOwner, saveStaffMember } from "../db/staff.js";
import { saveSubject, subjectRefs, toRef } from "../db/subject-refs.js";
import { roleName } from "../domain/staff.js";
import { relationChanged, subjectChanged, subjects } from "../events.js";
import { GITHUB_TOKEN_ENV, GITHUB_TOKEN_SETTING } from "./integrations.js";

/** The designed admin side of the network reads: staff, blocks, subjects, legacy ids, the code-hosting token. */
export function adminHandlers(ctx: NetworkContext): ServiceImpl<typeof NetworkAdminService> {
  const { sealer, staffList } = ctx;
  return {
    async setStaff(request) {
      const { subject } = request;
      // The contract takes only a defined role other than UNSPECIFIED: one with a name.
      const role = roleName(request.role)!;
      const member = await ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        if (role === "owner") {
          const owner = await networkOwner(em);
          if (owner && owner.subject !== subject)
            throw problem(
              409,
              "staff.owner_exists",
              "The network has one owner; change the current owner's role first.",
            );
        }
        const saved = await saveStaffMember(em, {
          subject,
          role,
          capabilities: [...new Set(request.capabilities)],
          updatedAt: at,
        }).catch((error: unknown) => {
          // Two owners set at once: the one-owner index refuses the second.
          throw error instanceof UniqueConstraintViolationException
            ? problem(409, "staff.owner_exists", "The network has one owner; change the current owner's role first.")
            : error;
        });
        await relationChanged(em, subjects.staffChanged, { subject, other: "", present: true, at });
        return saved;
      });
      staffList.forget();
      const refs = await subjectRefs(ctx, [subject]);
      return create(StaffEntrySchema, {
        subject: refs.get(subject),
        role: request.role,
        capabilities: member.capabilities,
        updatedAt: timestampFromDate(member.updatedAt),
      });
    },

    async removeStaff(request) {
      const { subject } = request;
      const removed = await ctx.transaction(async (em) => {
        const removed = await deleteStaffMember(em, subject);
        if (removed)
          await relationChanged(em, subjects.staffChanged, { subject, other: "", present: false, at: ctx.clock.now() });
        return removed;
      });
      staffList.forget();
      return create(RemoveStaffResponseSchema, { removed });
    },

    async setBlock(request) {
      const [blocker, blocked] = blockPair(request.blocker, request.blocked);
      return ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        if (await insertBlock(em, blocker, blocked, at)) {
          await relationChanged(em, subjects.blockChanged, { subject: blocker, other: blocked, present: true, at });
        }
        return blocksOf(em, blocker);
      });
    },

    async removeBlock(request) {
      const [blocker, blocked] = blockPair(request.blocker, request.blocked);
      return ctx.transaction(async (em) => {
        if (await deleteBlock(em, blocker, blocked))
          await relationChanged(em, subjects.blockChanged, {
            subject: blocker,
            other: blocked,
            present: false,
            at: ctx.clock.now(),
          });
        return blocksOf(em, blocker);
      });
    },

    async upsertSubject(request) {
      const id = requireSubject("id", request.id);
      const display = request.display;
      maxLength("display.display_name", display?.displayName ?? "", 100);
      maxLength("display.handle", display?.handle ?? "", 50);
      maxLength("display.avatar_url", display?.avatarUrl ?? "", 2000);
      const ref = await ctx.transaction(async (em) => {
        const at = ctx.clock.now();
        const row = await saveSubject(em, {
          id,
          displayName: display?.displayName ?? "",
          handle: display?.handle ?? "",
          avatarUrl: display?.avatarUrl ?? "",
          updatedAt: at,
        });
        const saved = toRef(id, row);
        await subjectChanged(em, saved, at);
        return saved;
      });
      staffList.forget();
      return ref;
    },

    async linkLegacyId(request) {
      const { subject } = request;
      await ctx.transaction(async (em) => {
        const existing = await legacyIdOf(em, request.service, request.localId);
        if (existing && existing.subject !== subject) {
          throw problem(409, "identity.legacy_conflict", "That legacy id already resolves to another subject.", {
            subject: existing.subject,
          });
        }
        if (existing) return;
        // A concurrent link of the same id: the first one stays, and this one answers against it.
        const link = { service: request.service, localId: request.localId, subject };
        if (!(await insertLegacyId(em, link, ctx.clock.now()))) {
          const winner = await legacyIdOf(em, request.service, request.localId, true);
          if (!winner) throw new Error("a legacy id was taken but is not readable");
          if (winner.subject !== subject)
            throw problem(409, "identity.legacy_conflict", "That legacy id already resolves to another subject.", {
              subject: winner.subject,
            });
        }
      });
      const refs = await subjectRefs(ctx, [subject]);
      return create(ResolutionSchema, {
        query: { service: request.service, localId: request.localId },
        found: true,
        subject: refs.get(subject),
      });
    },

    async setGithubToken(request) {
      // "The owner sets it": the admin panel calls for the owner, named in X-PF-Subject; the declared `owner` relation.
      const at = ctx.clock.now();
      await ctx.transaction(async (em) => {
        if (request.token === "") await deleteSetting(em, GITHUB_TOKEN_SETTING);
        else await saveSetting(em, GITHUB_TOKEN_SETTING, sealer.seal(request.token), at);
      });
      if (request.token !== "")
        return create(SetGithubTokenResponseSchema, { source: "admin", updatedAt: timestampFromDate(at) });
      return create(SetGithubTokenResponseSchema, {
        source: ctx.config.env[GITHUB_TOKEN_ENV] ? "environment" : "none",
      });
    },
  };
}

function blockPair(blocker: string, blocked: string): [string, string] {
  if (blocker === blocked) throw invalid("blocked", "A person cannot block themselves.");
  return [blocker, blocked];
}
