import type { HandlerContext } from "@connectrpc/connect";
import { callerOf } from "../../kit/auth/principal.js";
import { isEditor, requireEditor } from "../../kit/editors/editors.js";
import type { ServiceContext } from "../../kit/runtime/module.js";

/**
 * Who acts, for the audit: the editor person, else the service or app acting
 * for nobody (requireEditor admitted it).
 */
export async function editorActing(ctx: ServiceContext, call: HandlerContext): Promise<string> {
  return (await requireEditor(ctx, call)) ?? callerOf(call).principal.sub;
}

/**
 * Whether the caller reads as an editor (drafts, flags, the source table):
 * an editor person, or a service or first-party app acting for nobody; never
 * AI output, anonymous callers or other people.
 */
export async function readsAsEditor(ctx: ServiceContext, call: HandlerContext): Promise<boolean> {
  const { principal, person } = callerOf(call);
  if (principal.kind === "anonymous" || principal.origin === "ai") return false;
  if (person !== undefined) return isEditor(ctx, person);
  return principal.kind === "service" || (principal.kind === "app" && principal.fp);
}
