/**
 * What the client package's types refuse, proved by `npm run typecheck` (this file is never run): each line under
 * `@ts-expect-error` must fail to compile, or the directive itself is an error. The lines without one compile.
 */
import { createPlatformClient, type PlatformClient, type PlatformFetch } from "../../clients/ts/src/index.js";

export function connectCalls(pf: PlatformClient): void {
  void pf.paste.createPaste({ title: "A paste", body: "text" });
  // @ts-expect-error: PasteCreateRequest has no field `titel`
  void pf.paste.createPaste({ titel: "A paste" });
  // @ts-expect-error: a slug is a string
  void pf.paste.getPaste({ slug: 1 });
  // @ts-expect-error: no service of the platform is called `pastes`
  void pf.pastes;
}

export function fetchCalls(api: PlatformFetch): void {
  void api.GET("/community/api/pastes/{slug}", { params: { path: { slug: "a-paste" } } });
  // @ts-expect-error: the route's path variable is `slug`
  void api.GET("/community/api/pastes/{slug}", { params: { path: { id: "a-paste" } } });
  // @ts-expect-error: a required path variable left out
  void api.GET("/community/api/pastes/{slug}", { params: { path: {} } });
  // @ts-expect-error: no such route
  void api.GET("/community/api/pasts");
  void api.POST("/community/api/pastes", { body: { title: "A paste", body: "text" } });
  // @ts-expect-error: a title is a string
  void api.POST("/community/api/pastes", { body: { title: 1 } });
  // @ts-expect-error: the route is not a GET
  void api.GET("/community/api/pastes/{slug}/fork", { params: { path: { slug: "a-paste" } } });
}

export function callers(): void {
  createPlatformClient({ baseUrl: "http://127.0.0.1:8081", subject: "usr_alice", staff: true, origin: "ai" });
  // @ts-expect-error: X-PF-Staff takes only 1, written true
  createPlatformClient({ baseUrl: "http://127.0.0.1:8081", staff: "yes" });
  // @ts-expect-error: X-PF-Origin takes only ai
  createPlatformClient({ baseUrl: "http://127.0.0.1:8081", origin: "person" });
}
