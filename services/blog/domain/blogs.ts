import { invalid } from "../../kit/handler/problem.js";

/** A member's role; the contract's input rules refuse any other (`MemberRequest.role`), as does the table. */
export type Role = "owner" | "editor" | "author";

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
