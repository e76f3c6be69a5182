import { idPattern } from "../handler/ids.js";
import type { Config } from "../runtime/config.js";
import type { RelationResolver } from "../rpc/relations.js";
import type { ServiceContext } from "../service/module.js";
import { isListedEditor } from "./store.js";

const PERSON = idPattern("usr");

/** The seed setting of a service's editor list: `PF_<KEY>_EDITORS=usr_a,usr_b`. */
export function editorsSetting(key: string): string {
  return `PF_${key.toUpperCase()}_EDITORS`;
}

/**
 * The people the seed setting names, read by the host once at start (`ServiceContext.editors`). A name that is not
 * a usr_ subject is a configuration error that stops the start, never skipped: a typo would otherwise drop an editor
 * silently.
 */
export function seededEditors(config: Config, key: string): string[] {
  const name = editorsSetting(key);
  const seeded = (config.env[name] ?? "")
    .split(",")
    .map((each) => each.trim())
    .filter((each) => each !== "");
  const wrong = seeded.find((each) => !PERSON.test(each));
  if (wrong !== undefined) throw new Error(`${name}: "${wrong}" is not a usr_ subject`);
  return seeded;
}

/** Whether a person is an editor of the service: on its list, or named by its seed setting. */
export async function isEditor(ctx: ServiceContext, person: string): Promise<boolean> {
  return ctx.editors.includes(person) || (await isListedEditor(ctx, person));
}

/**
 * The resolver of a service's `editor` relation (analysis K7): a person on
 * its editor list holds it as `editor`. Declared on the proto service with
 * `refusal: "auth.editor_required"` and `acting_for_nobody: true` (a service
 * or first-party app acting for nobody is an editor too); the kit enforces it
 * (`rpc/relations.ts`: AI output and mods never hold it).
 */
export const editorRelation: RelationResolver<ServiceContext> = async (ctx, { person }) =>
  (await isEditor(ctx, person)) ? "editor" : undefined;
