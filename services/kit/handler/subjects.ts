import { idPattern } from "./ids.js";
import { invalid } from "./problem.js";

// Subjects come from tokens, not newId, but have the shape of the platform's ids.
const PERSON = idPattern("usr");
const SUBJECT = idPattern("usr", "gst");

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
