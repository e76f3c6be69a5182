import { invalid } from "../../kit/handler/problem.js";

/** A space id in a path: posts are pst_, threads thr_ (space's ids), checked before anything is recorded. */
export function requireSpaceId(kind: "post" | "thread", id: string): string {
  const prefix = kind === "post" ? "pst" : "thr";
  if (!new RegExp(`^${prefix}_[a-z0-9]{1,64}$`).test(id)) throw invalid("id", `id is a ${kind} (${prefix}_…)`);
  return id;
}

/** Forum actions a moderator takes through community, applied by space. */
export type ForumAction = "edit_post" | "delete_post" | "pin" | "lock";
