import { HotRead, type ReadContext } from "../../kit/db/reads.js";
import type { Viewer } from "../domain/access.js";
import type { PerkRow, PlanRow, PlanVersionRow, PublicationRow } from "./entities.js";
import type { PlanRows, VersionKey } from "./plans.js";

// Plan, version, perk, publication reads outside any transaction: hot reads (services/kit/db/reads.ts).

type Text<Row, Dates extends keyof Row, Big extends keyof Row = never> = Omit<Row, Dates | Big> & {
  [K in Dates]: null extends Row[K] ? string | null : string;
} & { [K in Big]: string };

const date = (text: string) => new Date(text);
const dateOrNull = (text: string | null) => (text === null ? null : new Date(text));

const PLAN_COLUMNS = `id, owner, status, current_version as "currentVersion", draft_version as "draftVersion",
  latest_version as "latestVersion", revision, created_at as "createdAt", updated_at as "updatedAt",
  published_at as "publishedAt", archived_at as "archivedAt"`;
type PlanText = Text<PlanRow, "createdAt" | "updatedAt" | "publishedAt" | "archivedAt", "revision">;
const planOf = (row: PlanText): PlanRow => ({
  ...row,
  revision: BigInt(row.revision),
  createdAt: date(row.createdAt),
  updatedAt: date(row.updatedAt),
  publishedAt: dateOrNull(row.publishedAt),
  archivedAt: dateOrNull(row.archivedAt),
});

/** What a viewer may see ($1 the grant, $2 the person): published plans; with the grant all; the owner their own. */
const VISIBLE_PLANS = `($1::boolean or status = 'published' or owner = $2)`;
const PAGE = `($3::text is null or status = $3) and ($4::text is null or id < $4) order by id desc limit $5`;
type PageParams = [boolean, string | null, string | null, string | null, number];

const plansListed = new HotRead<PlanText, PageParams>(
  "plans.listed",
  `select ${PLAN_COLUMNS} from {plans} where ${VISIBLE_PLANS} and ${PAGE}`,
);
// One statement per shape, so a creator's page always plans on plans_by_owner.
const plansOfOwner = new HotRead<PlanText, [...PageParams, string]>(
  "plans.by_owner",
  `select ${PLAN_COLUMNS} from {plans} where owner = $6 and ${VISIBLE_PLANS} and ${PAGE}`,
);
const plansById = new HotRead<PlanText, [string[]]>(
  "plans.by_id",
  `select ${PLAN_COLUMNS} from {plans} where id = any($1)`,
);

/** A page of the plans `viewer` may see, newest first: of `owner` when given, of `status` when given, before the cursor's id. */
export async function readPlanPage(
  ctx: ReadContext,
  viewer: Viewer,
  filter: { owner?: string; status?: string; before?: string },
  rows: number,
): Promise<PlanRow[]> {
  const page: PageParams = [viewer.grant, viewer.person ?? null, filter.status ?? null, filter.before ?? null, rows];
  const found = filter.owner ? await plansOfOwner.run(ctx, ...page, filter.owner) : await plansListed.run(ctx, ...page);
  return found.map(planOf);
}

/** A plan by id, or undefined. */
export async function readPlan(ctx: ReadContext, id: string): Promise<PlanRow | undefined> {
  const [row] = await plansById.run(ctx, [id]);
  return row && planOf(row);
}

const VERSION_COLUMNS = `plan_id as "planId", version, name, description, tier, perk_ids as "perkIds",
  created_by as "createdBy", created_at as "createdAt"`;
type VersionText = Text<PlanVersionRow, "createdAt">;
const versionOf = (row: VersionText): PlanVersionRow => ({ ...row, createdAt: date(row.createdAt) });

/** The (plan, version) pairs of $1 and $2, as a set (a pair asked twice is read once). */
const KEYS = `(plan_id, version) in (select * from unnest($1::text[], $2::int[]))`;
const versionsOfPlans = new HotRead<VersionText, [string[]]>(
  "plan_versions.by_plan",
  `select ${VERSION_COLUMNS} from {plan_versions} where plan_id = any($1) order by version desc`,
);
const versionsByKey = new HotRead<VersionText, [string[], number[]]>(
  "plan_versions.by_key",
  `select ${VERSION_COLUMNS} from {plan_versions} where ${KEYS} order by version desc`,
);

type PublicationText = Text<PublicationRow, "publishedAt">;
const publicationsByKey = new HotRead<PublicationText, [string[], number[]]>(
  "plan_publications.by_key",
  `select plan_id as "planId", version, perks, published_by as "publishedBy", published_at as "publishedAt"
   from {plan_publications} where ${KEYS}`,
);

const PERK_COLUMNS = `id, owner, kind, name, description, product_bindings as "productBindings", status, revision,
  created_at as "createdAt", updated_at as "updatedAt", retired_at as "retiredAt"`;
type PerkText = Text<PerkRow, "createdAt" | "updatedAt" | "retiredAt", "revision">;
const perkOf = (row: PerkText): PerkRow => ({
  ...row,
  revision: BigInt(row.revision),
  createdAt: date(row.createdAt),
  updatedAt: date(row.updatedAt),
  retiredAt: dateOrNull(row.retiredAt),
});
const perksById = new HotRead<PerkText, [string[]]>(
  "perks.by_id",
  `select ${PERK_COLUMNS} from {perks} where id = any($1)`,
);

/** What a viewer may see ($1 the grant, $2 the person): active perks; with the grant all; the owner their own. */
const PERKS_PAGE = `($1::boolean or status = 'active' or owner = $2) and ($3::text is null or kind = $3)
  and ($4::text is null or status = $4) and ($5::text is null or id < $5) order by id desc limit $6`;
type PerkPageParams = [boolean, string | null, string | null, string | null, string | null, number];
const perksListed = new HotRead<PerkText, PerkPageParams>(
  "perks.listed",
  `select ${PERK_COLUMNS} from {perks} where ${PERKS_PAGE}`,
);
const perksOfOwner = new HotRead<PerkText, [...PerkPageParams, string]>(
  "perks.by_owner",
  `select ${PERK_COLUMNS} from {perks} where owner = $7 and ${PERKS_PAGE}`,
);

/** A page of the perks `viewer` may see, newest first, filtered as given, before the cursor's id. */
export async function readPerkPage(
  ctx: ReadContext,
  viewer: Viewer,
  filter: { owner?: string; kind?: string; status?: string; before?: string },
  rows: number,
): Promise<PerkRow[]> {
  const page: PerkPageParams = [
    viewer.grant,
    viewer.person ?? null,
    filter.kind ?? null,
    filter.status ?? null,
    filter.before ?? null,
    rows,
  ];
  const found = filter.owner ? await perksOfOwner.run(ctx, ...page, filter.owner) : await perksListed.run(ctx, ...page);
  return found.map(perkOf);
}

const columnsOf = (keys: VersionKey[]): [string[], number[]] => [
  keys.map((key) => key.planId),
  keys.map((key) => key.version),
];

/** The rows plan answers read, as hot reads: for planViews and versionViews outside a transaction. */
export const hotPlanRows = (ctx: ReadContext): PlanRows => ({
  plans: async (ids) => (await plansById.run(ctx, ids)).map(planOf),
  versionsOfPlans: async (ids) => (await versionsOfPlans.run(ctx, ids)).map(versionOf),
  versions: async (keys) => (await versionsByKey.run(ctx, ...columnsOf(keys))).map(versionOf),
  publications: async (keys) =>
    (await publicationsByKey.run(ctx, ...columnsOf(keys))).map((row) => ({
      ...row,
      publishedAt: date(row.publishedAt),
    })),
  perks: async (ids) => (await perksById.run(ctx, ids)).map(perkOf),
});
