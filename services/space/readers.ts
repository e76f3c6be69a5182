import { vipMember } from "../kit/rpc/vip-membership.js";
import type { HandlerContext } from "@connectrpc/connect";
import { principalOf, staffActorOf, personOf } from "../kit/auth/principal.js";
import { problem } from "../kit/handler/problem.js";
import type { SpaceContext } from "./context.js";
import type { StoredSpace } from "./db/spaces.js";
import { opens, type Reach } from "./domain/spaces.js";
import { spaceNotFound } from "./db/spaces.js";

/**
 * Who reads or writes, as the forum's visibility sees them ("Visibility is
 * checked by the service itself"). A moderator is a service acting for nobody
 * or for a person it vouches with X-PF-Staff: 1 (the kit's staffActorOf), or
 * a person's own token that network's staff list names; a person's token never
 * vouches for itself. A member is a usr_ person; guests (gst_) and apps acting
 * for nobody read as anonymous.
 */
export interface Reader {
  /** The person (usr_ or gst_), "" for none. */
  person: string;
  /** The reach for a space of this visibility (asks network only for a staff space). */
  reachFor(space: StoredSpace): Promise<Reach>;
}

export function readerOf(ctx: SpaceContext, call: HandlerContext): Reader {
  const principal = principalOf(call);
  return readerFor(ctx, {
    person: personOf(principal) ?? "",
    staff: staffActorOf(principal, false) !== undefined,
    ownToken: principal.kind === "user",
  });
}

/**
 * A reader as described: the person ("" for none), whether a service vouches them (or acts for nobody: `staff`),
 * and whether they call with their own token (only then does network's staff list make them a moderator).
 * Community's content checks describe the reader of a comment thread so.
 */
export function readerFor(ctx: SpaceContext, who: { person: string; staff: boolean; ownToken: boolean }): Reader {
  const { person } = who;
  if (who.staff) return { person, reachFor: async () => "moderator" };
  const member = person.startsWith("usr_");
  let staffListed: Promise<boolean> | undefined;
  return {
    person,
    async reachFor(space) {
      if (!member) return "anonymous";
      if (space.visibility !== "staff" || !who.ownToken) return "member";
      staffListed ??= onStaffList(ctx, person);
      return (await staffListed) ? "moderator" : "member";
    },
  };
}

/** Whether network's staff list names the person; not answering is no ("unknown never authorizes"). */
async function onStaffList(ctx: SpaceContext, person: string): Promise<boolean> {
  try {
    const { staff } = await ctx.network.listStaff({}, { timeoutMs: ctx.settings.callTimeoutMs });
    return staff.some((entry) => entry.subject?.id === person);
  } catch (error) {
    ctx.logger.warn({ err: error }, "space: network's staff list did not answer; the reader is not a moderator");
    return false;
  }
}

/** The spaces a reader may open ("invisible spaces answer 404 and never appear in lists"). */
export async function openedBy(reader: Reader, spaces: StoredSpace[]): Promise<StoredSpace[]> {
  const reaches = await Promise.all(spaces.map((space) => reader.reachFor(space)));
  return spaces.filter((space, i) => opens(space.visibility, reaches[i]));
}

/** The space a reader may open: 404 space.not_found when it is missing or invisible to them. */
export async function see(reader: Reader, space: StoredSpace | undefined): Promise<StoredSpace> {
  if (!space || !opens(space.visibility, await reader.reachFor(space))) throw spaceNotFound();
  return space;
}

/**
 * The space a reader may open (`see`), through the members-only gate: 403
 * vip.members_only when it is members-only and vip does not say they are
 * entitled. Moderators pass the gate (designed). Vip not answering, or
 * answering unknown, is a refusal: "unknown never authorizes".
 */
export async function enter(ctx: SpaceContext, reader: Reader, space: StoredSpace | undefined): Promise<StoredSpace> {
  const seen = await see(reader, space);
  if (!seen.membersOnly) return seen;
  const reach = await reader.reachFor(seen);
  if (reach === "moderator") return seen;
  if (reach === "member" && (await entitled(ctx, reader.person, seen.vipCreator))) return seen;
  throw problem(403, "vip.members_only", "This space is for members: it needs a membership of its creator.", {
    space: seen.key,
    creator: seen.vipCreator,
  });
}

const entitled = (ctx: SpaceContext, person: string, creator: string) =>
  vipMember(ctx.vip, ctx.logger, { subject: person, creator }, { timeoutMs: ctx.settings.callTimeoutMs });
