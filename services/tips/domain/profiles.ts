import { create } from "@bufbuild/protobuf";
import {
  MediaRequestSettingsSchema,
  MinimumsSchema,
  ModeratorsSchema,
  ProfileSchema,
  TextToSpeechSchema,
  WordFilterSchema,
  type MediaRequestSettings,
  type Minimums,
  type Moderators,
  type Profile,
  type TextToSpeech,
  type WordFilter,
} from "../../../gen/pf/tips/v1/profiles_pb.js";
import type { Money } from "../../../gen/pf/v1/money_pb.js";
import { maxLength } from "../../kit/handler/text.js";
import { requireAmount } from "../../kit/handler/money.js";
import { invalid } from "../../kit/handler/problem.js";
import { requireUser } from "../../kit/handler/subjects.js";

const HOST = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** The settings a profile keeps as one document (the switches are columns). */
export interface ProfileSettings {
  minimums?: Minimums;
  textToSpeech?: TextToSpeech;
  mediaRequests?: MediaRequestSettings;
  wordFilter?: WordFilter;
  moderators?: Moderators;
}

function optionalAmount(field: string, value: Money | undefined): Money | undefined {
  if (value === undefined) return undefined;
  requireAmount(field, value);
  return value;
}

/**
 * Validates the sub-messages of a profile update (each replaces the stored one whole); 400 naming the field. The
 * contract's rules hold the voice, the count of hosts and max_seconds to their bounds.
 */
export function validSettings(update: ProfileSettings, creator: string): ProfileSettings {
  const out: ProfileSettings = {};
  if (update.minimums) {
    out.minimums = create(MinimumsSchema, {
      tip: optionalAmount("minimums.tip", update.minimums.tip),
      paidMessage: optionalAmount("minimums.paid_message", update.minimums.paidMessage),
    });
  }
  if (update.textToSpeech) {
    const tts = update.textToSpeech;
    out.textToSpeech = create(TextToSpeechSchema, {
      enabled: tts.enabled,
      voice: tts.voice,
      minimum: optionalAmount("text_to_speech.minimum", tts.minimum),
    });
  }
  if (update.mediaRequests) {
    const media = update.mediaRequests;
    const hosts = [...new Set(media.allowedHosts.map((host) => host.trim().toLowerCase()))];
    for (const host of hosts)
      if (!HOST.test(host))
        throw invalid("media_requests.allowed_hosts", `${JSON.stringify(host)} is not a host name (youtube.com).`);
    out.mediaRequests = create(MediaRequestSettingsSchema, {
      enabled: media.enabled,
      allowedHosts: hosts,
      minimum: optionalAmount("media_requests.minimum", media.minimum),
      maxSeconds: media.maxSeconds,
    });
  }
  if (update.wordFilter) {
    const words = [...new Set(update.wordFilter.words.map((word) => word.trim().toLowerCase()))];
    if (words.length > 200) throw invalid("word_filter.words", "word_filter.words holds at most 200 entries.");
    for (const word of words) {
      if (word === "") throw invalid("word_filter.words", "word_filter.words has an empty entry.");
      maxLength("word_filter.words", word, 100);
    }
    out.wordFilter = create(WordFilterSchema, { words });
  }
  if (update.moderators) {
    const subjects = [...new Set(update.moderators.subjects)];
    if (subjects.length > 100) throw invalid("moderators.subjects", "moderators.subjects holds at most 100 people.");
    for (const subject of subjects) {
      requireUser("moderators.subjects", subject);
      if (subject === creator)
        throw invalid("moderators.subjects", "The creator moderates already; list other people.");
    }
    out.moderators = create(ModeratorsSchema, { subjects });
  }
  return out;
}

/** The creator, or one of the creator's moderators: the people who hide and restore paid messages. */
export function mayModerate(profile: Profile | undefined, creator: string, person: string): boolean {
  return person === creator || (profile?.moderators?.subjects.includes(person) ?? false);
}

/** The profile as others see it: without the word filter and the moderators. */
export function publicPart(profile: Profile): Profile {
  return create(ProfileSchema, { ...profile, wordFilter: undefined, moderators: undefined });
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Whether a message holds a word of the filter, case-insensitively, on word boundaries. */
export function matchesWordFilter(filter: WordFilter | undefined, message: string): boolean {
  if (!filter || filter.words.length === 0 || message === "") return false;
  const pattern = new RegExp(`(^|[^\\p{L}\\p{N}])(${filter.words.map(escape).join("|")})(?=$|[^\\p{L}\\p{N}])`, "iu");
  return pattern.test(message);
}
