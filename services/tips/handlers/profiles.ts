import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ProfileResultSchema, PublicPageResultSchema } from "../../../gen/pf/tips/v1/profiles_pb.js";
import type { TipsService } from "../../../gen/pf/tips/v1/tips_pb.js";
import { actingPerson, callerOf } from "../../kit/auth/principal.js";
import { advisoryLock } from "../../kit/db/advisory-lock.js";
import { problem } from "../../kit/handler/problem.js";
import { checkRevision, ifMatchOf } from "../../kit/handler/revisions.js";
import { requireUser } from "../../kit/handler/subjects.js";
import type { TipsContext } from "../context.js";
import { goalsToProto, publicGoalsOf } from "../db/goals.js";
import { publicMessagesOf } from "../db/interaction-lists.js";
import { interactionToProto } from "../db/interactions.js";
import {
  changeProfile,
  insertProfile,
  profileRow,
  profileToProto,
  readProfile,
  settingsDocument,
} from "../db/profiles.js";
import { publicMessage } from "../domain/interactions.js";
import { tipPageDocuments } from "../db/search.js";
import { refreshSearchDocuments } from "../../kit/search-documents/record.js";
import { publicPart, validSettings, type ProfileSettings } from "../domain/profiles.js";

type ProfileHandlers = Pick<ServiceImpl<typeof TipsService>, "getProfile" | "updateProfile" | "getPublicPage">;

/** How many recent paid messages the public tip page shows. */
const PUBLIC_MESSAGES = 50;

function profileNotFound() {
  return problem(404, "profile.not_found", "There is no such tip profile.");
}

/** Creator tip profiles, and the public tip page built on them. */
export function profileHandlers(ctx: TipsContext): ProfileHandlers {
  return {
    async getProfile(request, call) {
      const creator = requireUser("creator", request.creator);
      const owner = callerOf(call).person === creator;
      const profile = await readProfile(ctx, creator);
      // A page switched off reads as missing to everyone but its owner.
      if (!profile || (!profile.pageEnabled && !owner)) throw profileNotFound();
      return create(ProfileResultSchema, { profile: owner ? profile : publicPart(profile) });
    },

    async updateProfile(request, call) {
      const creator = requireUser("creator", request.creator);
      if (actingPerson(call) !== creator) {
        throw problem(403, "tips.not_creator", "A tip profile is changed on its creator's behalf only.");
      }
      const update = validSettings(request as ProfileSettings, creator);
      const ifMatch = ifMatchOf(call);
      return ctx.transaction(async (em) => {
        await advisoryLock(em, `tips.profile:${creator}`);
        const at = ctx.clock.now();
        let row = await profileRow(em, creator);
        if (row) {
          checkRevision(row.revision, request.expectedRevision, ifMatch);
          const current = profileToProto(row);
          await changeProfile(em, row, {
            pageEnabled: request.pageEnabled ?? row.pageEnabled,
            accepting: request.accepting ?? row.accepting,
            settings: settingsDocument({ ...current, ...update }),
            revision: row.revision + 1n,
            updatedAt: at,
          });
        } else {
          // A writer expecting a revision expects a profile: there is none yet.
          if (request.expectedRevision !== undefined || ifMatch !== undefined) {
            throw problem(412, "revision.conflict", "There is no profile yet: send no revision to create it.");
          }
          // A new profile starts closed (page off, not accepting) unless the creator switches it on.
          row = await insertProfile(em, {
            creator,
            pageEnabled: request.pageEnabled ?? false,
            accepting: request.accepting ?? false,
            settings: settingsDocument(update),
            revision: 1n,
            createdAt: at,
            updatedAt: at,
          });
        }
        await refreshSearchDocuments(em, tipPageDocuments, [creator], at);
        return create(ProfileResultSchema, { profile: profileToProto(row) });
      });
    },

    async getPublicPage(request) {
      const creator = requireUser("creator", request.creator);
      const profile = await readProfile(ctx, creator);
      if (!profile || !profile.pageEnabled) throw profileNotFound();
      const em = ctx.orm.em.fork();
      const goals = await publicGoalsOf(em, creator);
      const messages = await publicMessagesOf(em, creator, PUBLIC_MESSAGES);
      return create(PublicPageResultSchema, {
        profile: publicPart(profile),
        goals: await goalsToProto(em, goals),
        messages: messages.map((row) => publicMessage(interactionToProto(row))),
      });
    },
  };
}
