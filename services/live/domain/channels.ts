/** Usernames are network handles compared case-insensitively: stored and looked up in lower case. */
export function normalUsername(handle: string): string {
  return handle.trim().toLowerCase();
}

/** A handle a channel can be read by (what the routes' username pattern admits), else null. */
export function channelUsername(handle: string): string | null {
  const username = normalUsername(handle);
  return /^[a-z0-9_.-]{1,64}$/.test(username) ? username : null;
}

/** Whose view a read is: the owner's and staff's include private listings, everyone else's public items only. */
export type View = "owner" | "staff" | "public";

/** The view of a caller acting for `person` (or nobody), `staff` as the kit's staff rule says, of `owner`'s channel. */
export function viewOf(person: string | undefined, staff: boolean, owner: string): View {
  if (person === owner) return "owner";
  return staff ? "staff" : "public";
}
