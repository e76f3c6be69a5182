import { idPattern } from "./ids.js";
import { invalid } from "./problem.js";

/**
 * The one grammar of a person's subject everywhere: a token's sub, X-PF-Subject, request fields holding one, search's
 * access lists. `usr_` (a network user) or `gst_` (a guest) and 1 to 64 lowercase letters or digits, the shape of
 * the platform's ids. Compared exactly, never case-folded: `usr_ABC` would be another person than `usr_abc`, so it
 * is no subject at all.
 */
export const SUBJECT = idPattern("usr", "gst");
const PERSON = idPattern("usr");

/** A network user (usr_…), or 400 naming the field. */
export function requireUser(field: string, value: string): string {
  if (!PERSON.test(value)) throw invalid(field, `${field} must be a usr_ subject`);
  return value;
}

/** A person or guest (usr_…, gst_…), or 400 naming the field. */
export function requireSubject(field: string, value: string): string {
  if (!SUBJECT.test(value)) throw invalid(field, `${field} must be a usr_ or gst_ subject`);
  return value;
}

export function isSubjectId(value: string): boolean {
  return SUBJECT.test(value);
}
