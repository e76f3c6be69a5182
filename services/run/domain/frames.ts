import type { JobInput } from "../../../gen/pf/bot/v1/jobs_pb.js";

/** "The whole job frame stays within the link's 1 MiB frame limit." */
export const FRAME_MAX_BYTES = 1024 * 1024;

/** The classes the spec names, which need a pre-registered artifact. */
const ARTIFACT_CLASSES = new Set(["function", "code"]);

/** A media object's key, as media makes them: what an input names, so never a URL or a credential. */
const MEDIA_KEY = /^[A-Za-z0-9_-]{24}$/;

/** A fault of a submitted frame that its declared rules cannot say: the field and why. */
export interface FrameFault {
  field: string;
  detail: string;
}

/**
 * What the frame's field rules leave to the service: an artifact for classes function and code, input names unique
 * and not `.` or `..` (the rules refuse separators), and each input a media object's key, never a URL or a
 * credential. The first fault, or undefined.
 */
export function frameFault(frame: { class: string; artifact: string; inputs: JobInput[] }): FrameFault | undefined {
  if (ARTIFACT_CLASSES.has(frame.class) && frame.artifact === "")
    return { field: "artifact", detail: `A ${frame.class} job names its pre-registered artifact.` };
  const names = new Set<string>();
  for (const [at, input] of frame.inputs.entries()) {
    if (input.name === "." || input.name === "..")
      return { field: `inputs[${at}].name`, detail: "An input's name is a file name, not . or .." };
    if (names.has(input.name))
      return { field: `inputs[${at}].name`, detail: `Input names are unique: ${input.name} is given twice.` };
    names.add(input.name);
    if (!MEDIA_KEY.test(input.mediaKey))
      return {
        field: `inputs[${at}].media_key`,
        detail: "An input is a media object's key (24 characters of A-Z a-z 0-9 _ -), never a URL or a credential.",
      };
  }
  return undefined;
}
