import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import { problem } from "../../kit/handler/problem.js";

export const projectNotFound = () => problem(404, "host.project.not_found", "There is no such project.");
export const siteNotFound = () => problem(404, "host.site.not_found", "There is no such site.");
export const deployNotFound = () => problem(404, "host.deploy.not_found", "There is no such deploy.");
export const domainNotFound = () => problem(404, "host.domain.not_found", "There is no such domain.");

/** What a path's id tells the relations: its project, the project's environment, and a principal's role there. */
export interface ProjectAccess {
  projectId: string;
  environment: string;
  /** owner, deployer or viewer; null when the principal is no member. */
  role: string | null;
}

/** One statement from the object to its project and the principal's member row ($1 the object, $2 the principal). */
function accessThrough(table: string): string {
  const project = table === "projects" ? "o.id" : "o.project_id";
  return `select p.id as "projectId", p.environment, m.role
    from {${table}} o join {projects} p on p.id = ${project}
    left join {members} m on m.project_id = p.id and m.principal = $2
    where o.id = $1`;
}

/** By an id's prefix: the object's table (a deleted deploy keeps its row, so it is still found), and its 404. */
const KINDS = {
  prj: {
    read: new HotRead<ProjectAccess, [string, string]>("access.project", accessThrough("projects")),
    notFound: projectNotFound,
  },
  sit: {
    read: new HotRead<ProjectAccess, [string, string]>("access.site", accessThrough("sites")),
    notFound: siteNotFound,
  },
  dep: {
    read: new HotRead<ProjectAccess, [string, string]>("access.deploy", accessThrough("deploys")),
    notFound: deployNotFound,
  },
  dom: {
    read: new HotRead<ProjectAccess, [string, string]>("access.domain", accessThrough("domains")),
    notFound: domainNotFound,
  },
};

function kindOf(id: string) {
  const kind = KINDS[id.slice(0, 3) as keyof typeof KINDS] as (typeof KINDS)[keyof typeof KINDS] | undefined;
  if (kind === undefined) throw new Error(`"${id}" names no object of host`);
  return kind;
}

/** The project of the object an id names and the principal's role there; the object's 404 when there is none. */
export async function accessTo(ctx: ReadContext, id: string, principal: string): Promise<ProjectAccess> {
  const kind = kindOf(id);
  const [found] = await kind.read.run(ctx, id, principal);
  if (found === undefined) throw kind.notFound();
  return found;
}

/** The 404 of the object an id names (prj_, sit_, dep_ or dom_). */
export function notFoundOf(id: string) {
  return kindOf(id).notFound();
}
