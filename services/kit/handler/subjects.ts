import { invalid } from "./problem.js";

const PERSON = /^usr_[0-9a-z]{1,64}$/;
const SUBJECT = /^(usr|gst)_[0-9a-z]{1,64}$/;

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
