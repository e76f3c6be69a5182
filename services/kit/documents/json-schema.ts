import { Ajv, type ErrorObject } from "ajv";
import semver from "semver";
import { problem } from "../handler/problem.js";

/**
 * The one ajv instance every service checks its JSON documents with: strict
 * (a schema keyword ajv does not know is a bug, not a silent no-op), every
 * fault reported, and the platform's two formats. A schema `$id` can be
 * compiled here once only, so two definitions of one document id fail at load.
 */
const ajv = new Ajv({ allErrors: true, strict: true });
// Exactly a version (`1.2.3`, `1.2.3-rc.1+build.5`): no leading `v` or `=`, no spaces, which semver.parse would take.
ajv.addFormat("semver", (text: string) => /^\d\S*$/.test(text) && semver.parse(text) !== null);
// A range semver reads (`^1.2.0`, `>=1 <2`); blank is refused, though semver would read it as `*`.
ajv.addFormat("semver-range", (text: string) => text.trim() !== "" && semver.validRange(text) !== null);

/** What is wrong with a document, at an RFC 6901 JSON pointer into it. */
export interface Fault {
  pointer: string;
  message: string;
}

/** A compiled schema: the faults of a document, none when it is valid. */
export type DocumentCheck = (document: unknown) => Fault[];

/** At most this many faults are listed in a problem's `errors`: the first also names the `pointer`. */
export const MAX_FAULTS = 20;

/** Compiles a JSON Schema on the kit's ajv (once, at load: a schema ajv refuses fails the module). */
export function schemaCheck(schema: object): DocumentCheck {
  const validate = ajv.compile(schema);
  return (document) => (validate(document) ? [] : faultsOf(validate.errors));
}

/** A JSON pointer token (RFC 6901). */
export const pointerToken = (token: string) => token.replaceAll("~", "~0").replaceAll("/", "~1");

const FORMAT_MESSAGES: Record<string, string> = {
  semver: "must be a semver version (1.2.3)",
  "semver-range": "must be a semver range (^1.2.0)",
};

/** Ajv's errors as pointers to the member at fault: a missing or unknown member is named itself, not its parent. */
function faultsOf(errors: ErrorObject[] | null | undefined): Fault[] {
  return (errors ?? []).map((error) => {
    const params = error.params as { missingProperty?: string; additionalProperty?: string; format?: string };
    const member = params.missingProperty ?? params.additionalProperty;
    const pointer = member === undefined ? error.instancePath : `${error.instancePath}/${pointerToken(member)}`;
    let message = error.message ?? "is not valid";
    if (params.missingProperty !== undefined) message = "is required";
    else if (params.additionalProperty !== undefined) message = "is not a member this schema knows";
    else if (error.keyword === "format" && params.format) message = FORMAT_MESSAGES[params.format] ?? message;
    return { pointer, message };
  });
}

/**
 * 400 with the caller's own problem code naming what is wrong in a document
 * the request sent in `field`: `pointer` (the first fault) and `errors` (up to
 * 20 pointers with their messages). `schemaId` names the schema in the detail.
 */
export function documentInvalid(code: string, field: string, faults: readonly Fault[], schemaId?: string) {
  const [first] = faults;
  const what = schemaId ? `a valid ${schemaId}` : "valid";
  return problem(400, code, `The ${field} is not ${what}: ${first.pointer || "/"} ${first.message}.`, {
    field,
    pointer: first.pointer,
    errors: faults.slice(0, MAX_FAULTS).map((fault) => ({ pointer: fault.pointer, message: fault.message })),
  });
}
