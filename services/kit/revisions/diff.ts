import { diffArrays } from "diff";

/**
 * The one revision diff (README "Revisions"): pure and deterministic, by
 * paragraph (text split at blank lines) and, inside a changed paragraph, by
 * line. Its shape is `pf.v1.RevisionDiff` (proto/pf/v1/revisions.proto), the
 * same for every service's diff route.
 */

export type LineOp = "equal" | "insert" | "delete";

export interface LineChange {
  op: LineOp;
  text: string;
}

/** One paragraph: kept, inserted, deleted (`text`), or changed in place (`lines`). */
export interface ParagraphChange {
  op: LineOp | "change";
  text: string;
  lines: LineChange[];
}

export interface FieldDiff {
  field: string;
  changed: boolean;
  paragraphs: ParagraphChange[];
}

export interface RevisionDiff {
  from: number;
  to: number;
  fields: FieldDiff[];
}

/** A revision's text fields by name, e.g. { title, summary, body }. */
export type RevisionText = Readonly<Record<string, string>>;

/** The diff of revision `from` to revision `to`, field by field in the order of `fields`. */
export function diffRevisions(
  from: { n: number; text: RevisionText },
  to: { n: number; text: RevisionText },
  fields: readonly string[],
): RevisionDiff {
  return {
    from: from.n,
    to: to.n,
    fields: fields.map((field) => diffField(field, from.text[field] ?? "", to.text[field] ?? "")),
  };
}

/** One field's diff; `changed` is false exactly when both texts split into the same paragraphs. */
export function diffField(field: string, before: string, after: string): FieldDiff {
  const paragraphs = diffText(before, after);
  return { field, changed: paragraphs.some((p) => p.op !== "equal"), paragraphs };
}

/** Paragraph-level changes of `before` → `after`; a deleted run followed by an inserted one pairs up as changes. */
export function diffText(before: string, after: string): ParagraphChange[] {
  const out: ParagraphChange[] = [];
  const parts = diffArrays(paragraphsOf(before), paragraphsOf(after));
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    const next = parts[i + 1];
    if (part.removed && next?.added) {
      const paired = Math.min(part.value.length, next.value.length);
      for (let k = 0; k < paired; k++) out.push(changed(part.value[k]!, next.value[k]!));
      for (const text of part.value.slice(paired)) out.push({ op: "delete", text, lines: [] });
      for (const text of next.value.slice(paired)) out.push({ op: "insert", text, lines: [] });
      i++;
      continue;
    }
    const op: LineOp = part.added ? "insert" : part.removed ? "delete" : "equal";
    for (const text of part.value) out.push({ op, text, lines: [] });
  }
  return out;
}

function changed(before: string, after: string): ParagraphChange {
  const lines: LineChange[] = [];
  for (const part of diffArrays(before.split("\n"), after.split("\n"))) {
    const op: LineOp = part.added ? "insert" : part.removed ? "delete" : "equal";
    for (const text of part.value) lines.push({ op, text });
  }
  return { op: "change", text: "", lines };
}

/** Paragraphs: line endings made \n and lines cut of trailing spaces, split at blank lines; empty ones dropped. */
export function paragraphsOf(text: string): string[] {
  return text
    .replace(/\r\n?/g, "\n")
    .replace(/[ \t]+$/gm, "")
    .split(/\n{2,}/)
    .map((paragraph) => paragraph.replace(/^\n+|\n+$/g, ""))
    .filter((paragraph) => paragraph !== "");
}
