import { create, fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager, RequiredEntityData } from "@mikro-orm/postgresql";
import { ProfileSchema, type Profile } from "../../../gen/pf/tips/v1/profiles_pb.js";
import type { ProfileSettings } from "../domain/profiles.js";
import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { ProfileRow } from "./entities.js";

/** The sub-messages a profile keeps as one JSON document. */
export function settingsDocument(settings: ProfileSettings): Record<string, unknown> {
  return toJson(ProfileSchema, create(ProfileSchema, settings)) as Record<string, unknown>;
}

/** A profile row as stored: the entity, or a hot read's plain row. */
type StoredProfile = Pick<
  ProfileRow,
  "creator" | "pageEnabled" | "accepting" | "settings" | "revision" | "createdAt" | "updatedAt"
>;

export function profileToProto(row: StoredProfile): Profile {
  const settings = fromJson(ProfileSchema, row.settings as JsonValue);
  return create(ProfileSchema, {
    creator: row.creator,
    pageEnabled: row.pageEnabled,
    accepting: row.accepting,
    minimums: settings.minimums,
    textToSpeech: settings.textToSpeech,
    mediaRequests: settings.mediaRequests,
    wordFilter: settings.wordFilter,
    moderators: settings.moderators,
    revision: row.revision,
    createdAt: timestampFromDate(row.createdAt),
    updatedAt: timestampFromDate(row.updatedAt),
  });
}

/** A creator's profile row, or null when the creator has none. */
export function profileRow(em: EntityManager, creator: string): Promise<ProfileRow | null> {
  return em.findOne(ProfileRow, { creator });
}

/** Writes a creator's first profile. */
export async function insertProfile(em: EntityManager, profile: RequiredEntityData<ProfileRow>): Promise<ProfileRow> {
  const row = em.create(ProfileRow, profile);
  await em.flush();
  return row;
}

/** Writes changes to a profile. */
export async function changeProfile(em: EntityManager, row: ProfileRow, changes: Partial<ProfileRow>): Promise<void> {
  Object.assign(row, changes);
  await em.flush();
}

/** A creator's profile, or undefined when the creator has none. */
export async function loadProfile(em: EntityManager, creator: string): Promise<Profile | undefined> {
  const row = await profileRow(em, creator);
  return row ? profileToProto(row) : undefined;
}

const profileByCreator = new HotRead<
  Omit<StoredProfile, "revision" | "createdAt" | "updatedAt"> & {
    revision: string;
    createdAt: string;
    updatedAt: string;
  },
  [string]
>(
  "profiles.by_creator",
  `select creator, page_enabled as "pageEnabled", accepting, settings, revision,
     created_at as "createdAt", updated_at as "updatedAt" from {profiles} where creator = $1`,
);

/** A creator's profile read outside a transaction (a hot read), or undefined when the creator has none. */
export async function readProfile(ctx: ReadContext, creator: string): Promise<Profile | undefined> {
  const [row] = await profileByCreator.run(ctx, creator);
  if (!row) return undefined;
  return profileToProto({
    ...row,
    revision: BigInt(row.revision),
    createdAt: new Date(row.createdAt),
    updatedAt: new Date(row.updatedAt),
  });
}
