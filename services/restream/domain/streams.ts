import type { StreamSettings } from "../../../gen/pf/restream/v1/streams_pb.js";
import { invalid } from "../../kit/handler/problem.js";
import type { StoredSettings } from "../db/entities.js";

/** A new stream's settings where the request leaves them unset (designed: the spec names only "settings"). */
export const DEFAULT_SETTINGS: StoredSettings = {
  autoStartOutputs: true,
  recording: false,
  latencyMode: "normal",
  maxBitrateKbps: 0,
};

/** The settings after a write: each field sent replaces the stored one, the rest are kept. */
export function settingsAfter(stored: StoredSettings, asked: StreamSettings | undefined): StoredSettings {
  if (!asked) return stored;
  return {
    autoStartOutputs: asked.autoStartOutputs ?? stored.autoStartOutputs,
    recording: asked.recording ?? stored.recording,
    // The input rule allows only normal and low.
    latencyMode: (asked.latencyMode as StoredSettings["latencyMode"] | undefined) ?? stored.latencyMode,
    maxBitrateKbps: asked.maxBitrateKbps ?? stored.maxBitrateKbps,
  };
}

const REF_KEY = /^[a-z][a-z0-9_]{0,39}$/;
const REF_VALUE_MAX = 200;
const REFS_MAX = 20;

/**
 * The external references after a write: on create and with `replace` the sent ones (empty values dropped), else the
 * stored ones merged with the sent ones (an empty value removes its key). 400 naming external_refs for a key not of
 * `^[a-z][a-z0-9_]{0,39}$`, a value over 200 characters, or more than 20 references.
 */
export function refsAfter(
  stored: Record<string, string>,
  asked: Record<string, string>,
  replace: boolean,
): Record<string, string> {
  const refs: Record<string, string> = replace ? {} : { ...stored };
  for (const [key, value] of Object.entries(asked)) {
    if (!REF_KEY.test(key))
      throw invalid("external_refs", `external_refs key "${key}" must match ^[a-z][a-z0-9_]{0,39}$`);
    if (Array.from(value).length > REF_VALUE_MAX)
      throw invalid("external_refs", `external_refs.${key} must be at most ${REF_VALUE_MAX} characters`);
    if (value === "") delete refs[key];
    else refs[key] = value;
  }
  if (Object.keys(refs).length > REFS_MAX)
    throw invalid("external_refs", `a stream holds at most ${REFS_MAX} external references`);
  return refs;
}
