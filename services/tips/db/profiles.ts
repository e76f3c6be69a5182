import { create, fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { ProfileSchema, type Profile } from "../../../gen/pf/tips/v1/profiles_pb.js";
import type { ProfileSettings } from "../domain/profiles.js";
import { ProfileRow } from "./entities.js";

/** The sub-messages a profile keeps as one JSON document. */
export function settingsDocument(settings: ProfileSettings): Record<string, unknown> {
  return toJson(ProfileSchema, create(ProfileSchema, settings)) as Record<string, unknown>;
}

export function profileToProto(row: ProfileRow): Profile {
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

/** A creator's profile, or undefined when the creator has none. */
export async function loadProfile(em: EntityManager, creator: string): Promise<Profile | undefined> {
  const row = await em.findOne(ProfileRow, { creator });
  return row ? profileToProto(row) : undefined;
}
