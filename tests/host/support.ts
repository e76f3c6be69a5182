import { StaffRole } from "../../gen/pf/network/v1/network_pb.js";
import type { HostContext } from "../../services/host/context.js";
import { sql } from "../../services/kit/db/sql.js";
import { outboxEvents } from "../support/outbox.js";
import type { HttpAnswer, TestPlatform } from "../support/platform.js";

export { seedStaff } from "../games/support.js";
export { StaffRole };

/** Every host capability: what the first-party web backend (a service acting for people) holds. */
export const HOST_CAPS = ["host.site.manage", "host.deploy.create", "host.domain.manage"];

/** The platform settings host tests run with: the sites' listener on a free port. */
export const HOST_ENV = { PF_HOST_SITES_PORT: "0" };

let n = 0;
/** A fresh id body, unique within a run (lowercase letters and digits, as ids and slugs take). */
export const fresh = (tag: string) => `${tag}${Date.now().toString(36)}${(n++).toString(36)}`;

export const hostContext = (t: TestPlatform) => t.platform.contexts.get("host") as HostContext;

/** A person's own token (sandbox when asked). */
export const personToken = (t: TestPlatform, sub: string, env?: "sandbox" | "production") =>
  t.token({ kind: "user", sub, ...(env ? { env } : {}) });

/** The web backend's service token, which names the person it acts for in X-PF-Subject. */
export const webToken = (t: TestPlatform, env?: "sandbox") =>
  t.token({ kind: "service", svc: "web", caps: HOST_CAPS, ...(env ? { env } : {}) });

/** A first-party app's token acting as itself (a CI deploy token). */
export const appToken = (t: TestPlatform, appId: string, fp = true) =>
  t.token({ kind: "app", app_id: appId, caps: HOST_CAPS, fp });

export type HostCall = (method: string, path: string, body?: unknown) => Promise<HttpAnswer>;

/** Calls host routes through the gateway with a token (and X-PF-* headers). */
export function hostCall(t: TestPlatform, token?: string, headers: Record<string, string> = {}): HostCall {
  return (method, path, body) => t.http(method, `/host/api/v1${path}`, { token, body, headers });
}

/** Calls host routes as a person with their own token. */
export async function asPerson(t: TestPlatform, sub: string, env?: "sandbox"): Promise<HostCall> {
  return hostCall(t, await personToken(t, sub, env));
}

/** A new project owned by `owner`'s own call; answers its id. */
export async function projectOf(as: HostCall, body: Record<string, unknown> = {}): Promise<string> {
  const answer = await as("POST", "/projects", { name: "Project", ...body });
  if (answer.status !== 201) throw new Error(`project create: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.project.id as string;
}

/** A new site in a project; answers its id and slug. */
export async function siteOf(
  as: HostCall,
  projectId: string,
  slug = fresh("s"),
): Promise<{ id: string; slug: string }> {
  const answer = await as("POST", `/projects/${projectId}/sites`, { slug });
  if (answer.status !== 201) throw new Error(`site create: ${answer.status} ${JSON.stringify(answer.body)}`);
  return { id: answer.body.site.id as string, slug };
}

/** Puts a member in a project as its owner. */
export async function addMember(as: HostCall, projectId: string, principal: string, role: string): Promise<void> {
  const answer = await as("PUT", `/projects/${projectId}/members/${principal}`, { role });
  if (answer.status !== 200) throw new Error(`member put: ${answer.status} ${JSON.stringify(answer.body)}`);
}

/** The host events naming an id, oldest first: subject and payload. */
export async function hostEvents(t: TestPlatform, about: string): Promise<Record<string, unknown>[]> {
  return (await outboxEvents(t, "host", about)).map((event) => ({
    subject: event.subject,
    ...(JSON.parse(event.payload) as Record<string, unknown>),
  }));
}

/** Runs a statement on host's schema (`{table}` names qualified), for what no route shows. */
export async function hostSql<T>(t: TestPlatform, text: string, params: unknown[] = []): Promise<T[]> {
  return sql<T>(hostContext(t).orm.em.fork(), text, params);
}
