import { invalid } from "./problem.js";

/** Refuses text longer than `max` characters with 400 naming the field; answers the text. */
export function maxLength(field: string, value: string, max: number): string {
  if (value.length > max) throw invalid(field, `${field} holds at most ${max} characters`);
  return value;
}
