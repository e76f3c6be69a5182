import { HotRead, type ReadContext } from "../../kit/db/reads.js";

/** What a host name serves: a site, with its active deploy (none yet: null) and whether it or its project is taken down. */
export interface SiteRoute {
  siteId: string;
  projectId: string;
  deployId: string | null;
  takenDown: boolean;
}

const COLUMNS = `s.id as "siteId", s.project_id as "projectId", s.active_deploy_id as "deployId",
  (s.taken_down_at is not null or p.taken_down_at is not null) as "takenDown"`;

const siteBySlug = new HotRead<SiteRoute, [string]>(
  "serving.site_by_slug",
  `select ${COLUMNS} from {sites} s join {projects} p on p.id = s.project_id where s.slug = $1`,
);

const siteByDomain = new HotRead<SiteRoute, [string]>(
  "serving.site_by_domain",
  `select ${COLUMNS} from {domains} d join {sites} s on s.id = d.site_id join {projects} p on p.id = s.project_id
    where d.hostname = $1 and d.status = 'verified'`,
);

const NAME = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/;

/** The host name of a Host header: lower case, without its port or a trailing dot; "" when it names no host (an IP v6 literal, garbage). */
export function hostnameOf(header: string | undefined): string {
  if (header === undefined || header.charCodeAt(0) === 91 /* [ */) return "";
  const colon = header.indexOf(":");
  let name = (colon === -1 ? header : header.slice(0, colon)).toLowerCase();
  if (name.endsWith(".")) name = name.slice(0, -1);
  return NAME.test(name) ? name : "";
}

/** How names map to sites: `<slug>.<sites domain>`, or a custom domain outside the platform's domains. */
export class SiteNames {
  private readonly suffix: string;

  constructor(
    sitesDomain: string,
    private readonly platformDomains: readonly string[],
  ) {
    this.suffix = `.${sitesDomain}`;
  }

  /** The slug a host name names under the sites domain (one label), or undefined. */
  slugOf(hostname: string): string | undefined {
    if (!hostname.endsWith(this.suffix)) return undefined;
    const slug = hostname.slice(0, -this.suffix.length);
    return slug !== "" && !slug.includes(".") ? slug : undefined;
  }

  /** A platform domain, or a name under one, is never a custom domain: no lookup for it. */
  isPlatform(hostname: string): boolean {
    return this.platformDomains.some((domain) => hostname === domain || hostname.endsWith(`.${domain}`));
  }

  /** The site a host name serves, read from PostgreSQL; null when it serves none. */
  async read(ctx: ReadContext, hostname: string): Promise<SiteRoute | null> {
    const slug = this.slugOf(hostname);
    if (slug !== undefined) return (await siteBySlug.run(ctx, slug))[0] ?? null;
    if (hostname === "" || this.isPlatform(hostname)) return null;
    return (await siteByDomain.run(ctx, hostname))[0] ?? null;
  }
}
