import { createContextValues, type HandlerContext } from "@connectrpc/connect";
import { ANONYMOUS, callerKey, type Caller, type Principal } from "../../services/kit/auth/principal.js";

/**
 * A handler's view of an admitted call: the caller enforcement would hand it,
 * for kit rules that read only the caller (editor lists, authorship). Routes
 * using them test the same rules again through enforcement.
 */
export function callAs(principal: Partial<Principal>, person?: string): HandlerContext {
  const full: Principal = { ...ANONYMOUS, caps: new Set(), ...principal };
  const caller: Caller = { principal: full, admittedBy: "", person };
  return { values: createContextValues().set(callerKey, caller) } as unknown as HandlerContext;
}

/** A person with their own user token. */
export const asUser = (sub: string) => callAs({ kind: "user", sub }, sub);

/** The web service acting as itself. */
export const asService = (extra: Partial<Principal> = {}) =>
  callAs({ kind: "service", sub: "svc:web", service: "web", ...extra });

/** The web service acting for a person (X-PF-Subject). */
export const asServiceFor = (subject: string, extra: Partial<Principal> = {}) =>
  callAs({ kind: "service", sub: "svc:web", service: "web", actingSubject: subject, ...extra }, subject);

/**
 * The token with its signature altered. The signature's first character always
 * carries signature bits; its last ones may not (base64url padding bits, and the
 * high bits of Ed25519's S are zero), so rewriting the tail can leave it valid.
 */
export function forged(token: string): string {
  const at = token.lastIndexOf(".") + 1;
  return `${token.slice(0, at)}${token[at] === "A" ? "B" : "A"}${token.slice(at + 1)}`;
}
