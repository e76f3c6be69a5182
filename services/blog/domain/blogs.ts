import { invalid } from "../../kit/handler/problem.js";

/** The spec's theme presets; nothing else (no custom CSS, no template). */
export const THEMES = ["vibe", "paper", "slate", "sand", "nord", "high-contrast"] as const;
export const ROLES = ["owner", "editor", "author"] as const;
export type Role = (typeof ROLES)[number];

const HANDLE = /^[a-z0-9](?:[a-z0-9-]{1,28}[a-z0-9])$/;
/** Handles that collide with the blog's own paths. */
const RESERVED_HANDLES = new Set(["api", "feeds", "internal", "admin", "official", "blog", "blogs", "posts"]);

/** A handle as given: 3-30 of a-z, 0-9 and inner dashes; 400 naming `field` otherwise. */
export function requireHandle(field: string, value: string): string {
  const handle = value.trim().toLowerCase();
  if (!HANDLE.test(handle) || handle.includes("--"))
    throw invalid(field, `${field} is 3-30 characters of a-z, 0-9 and single inner dashes.`);
  if (RESERVED_HANDLES.has(handle)) throw invalid(field, `${field} "${handle}" is reserved.`);
  return handle;
}

/** A network username made into a handle (lowercased, other characters dashed, cut to 30); "" when nothing is left. */
export function handleFromUsername(username: string): string {
  const handle = username
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 30)
    .replace(/-+$/, "");
  return HANDLE.test(handle) && !RESERVED_HANDLES.has(handle) ? handle : "";
}

export function requireTheme(value: string): string {
  if (!(THEMES as readonly string[]).includes(value))
    throw invalid("theme", `theme is one of ${THEMES.join(", ")} (no custom CSS).`);
  return value;
}

export function requireRole(value: string): Role {
  if (!(ROLES as readonly string[]).includes(value)) throw invalid("role", `role is one of ${ROLES.join(", ")}.`);
  return value as Role;
}

const LANGUAGE = /^[a-zA-Z]{2,3}(?:-[a-zA-Z0-9]{2,8}){0,3}$/;

/** A BCP 47 language tag, or "" for none. */
export function requireLanguage(value: string): string {
  if (value !== "" && !LANGUAGE.test(value)) throw invalid("language", "language is a BCP 47 tag such as en or pt-BR.");
  return value;
}

/** Items per feed. */
export function requireItemCount(value: number): number {
  if (!Number.isInteger(value) || value < 1 || value > 100) throw invalid("feed.item_count", "item_count is 1-100.");
  return value;
}
