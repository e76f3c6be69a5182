/** Who may open a space (the spec: "visibility public, members or staff"). */
export type Visibility = "public" | "members" | "staff";

/** How far a caller reaches: anonymous (no person, or a guest), a signed-in member (usr_), or a moderator. */
export type Reach = "anonymous" | "member" | "moderator";

/** A space as PF_SPACE_SEED and the admin RPC state it. */
export interface SpaceSeed {
  key: string;
  title: string;
  description: string;
  visibility: Visibility;
  membersOnly: boolean;
  vipCreator: string;
}

/** Space keys: the path's {space}; never a word the /s pages use beside it. */
export const SPACE_KEY = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
const RESERVED_KEYS = new Set(["feed", "feed-xml", "t"]);

/** The creator a members-only space's gate asks vip about: a person (usr_) or the network's own plans. */
const VIP_CREATOR = /^(network|usr_[a-z0-9]{1,64})$/;

/** "Anonymous callers see public spaces; signed-in people also members spaces; moderators also staff spaces." */
export function opens(visibility: Visibility, reach: Reach): boolean {
  if (visibility === "public") return true;
  if (visibility === "members") return reach !== "anonymous";
  return reach === "moderator";
}

/** What is wrong with a space's definition, as [field, detail], or undefined when it is valid. */
export function spaceProblem(space: SpaceSeed): [string, string] | undefined {
  if (!SPACE_KEY.test(space.key) || RESERVED_KEYS.has(space.key))
    return ["key", "key is 1 to 40 of a-z, 0-9 and - (not at either end), and not feed or t"];
  if (space.title.trim() === "" || space.title.length > 120) return ["title", "title is 1 to 120 characters"];
  if (space.description.length > 2000) return ["description", "description holds at most 2000 characters"];
  if (space.membersOnly !== (space.vipCreator !== ""))
    return ["vip_creator", "a members-only space names the creator whose membership opens it, and only it does"];
  if (space.membersOnly && !VIP_CREATOR.test(space.vipCreator))
    return ["vip_creator", "vip_creator is a usr_ id or network"];
  return undefined;
}

/**
 * PF_SPACE_SEED: a JSON array of spaces
 * (`[{"key":"general","title":"General","visibility":"public"}]`, with
 * optional description, members_only and vip_creator). Startup stops naming
 * what is wrong.
 */
export function parseSeed(raw: string): SpaceSeed[] {
  if (raw.trim() === "") return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error("PF_SPACE_SEED must be a JSON array of spaces");
  }
  if (!Array.isArray(parsed)) throw new Error("PF_SPACE_SEED must be a JSON array of spaces");
  return parsed.map((entry: Record<string, unknown>, index) => {
    const text = (name: string) => (typeof entry?.[name] === "string" ? (entry[name] as string) : "");
    const visibility = text("visibility") || "public";
    if (!["public", "members", "staff"].includes(visibility))
      throw new Error(`PF_SPACE_SEED[${index}].visibility must be public, members or staff`);
    const seed: SpaceSeed = {
      key: text("key"),
      title: text("title"),
      description: text("description"),
      visibility: visibility as Visibility,
      membersOnly: entry?.members_only === true,
      vipCreator: text("vip_creator"),
    };
    const wrong = spaceProblem(seed);
    if (wrong) throw new Error(`PF_SPACE_SEED[${index}].${wrong[0]}: ${wrong[1]}`);
    return seed;
  });
}
