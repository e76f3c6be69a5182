import type { HandlerContext } from "@connectrpc/connect";
import { callerOf, personOf } from "../auth/principal.js";
import { problem } from "../handler/problem.js";
import { idPattern } from "../handler/ids.js";
import type { Config } from "../runtime/config.js";
import type { ServiceContext } from "../runtime/module.js";
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
 * Admits an editor of the service (analysis K7) and answers who acts: a person
 * on the editor list, with their own user token or named by a service in
 * X-PF-Subject; or, unless `person` is asked for, a service or first-party app
 * acting for nobody (answers undefined). AI output (`X-PF-Origin: ai`) is never
 * an editor, whoever it names. Everyone else: 403 `auth.editor_required`.
 */
export async function requireEditor(
  ctx: ServiceContext,
  call: HandlerContext,
  options: { person?: boolean } = {},
): Promise<string | undefined> {
  const { principal, person: admitted } = callerOf(call);
  if (principal.origin === "ai") throw editorRequired("AI output is never an editor; a person on the list must act.");
  const person = admitted ?? personOf(principal);
  if (person !== undefined) {
    if (await isEditor(ctx, person)) return person;
    throw editorRequired(`${person} is not on the ${ctx.key} editor list.`);
  }
  if (options.person) throw editorRequired(`A person on the ${ctx.key} editor list must act; a service alone cannot.`);
  // A mod is never an editor, not even as the service or app acting for nobody.
  if (principal.mod === undefined && (principal.kind === "service" || (principal.kind === "app" && principal.fp)))
    return undefined;
  throw editorRequired(`Only the ${ctx.key} editors may do this.`);
}

function editorRequired(detail: string): Error {
  return problem(403, "auth.editor_required", detail);
}
