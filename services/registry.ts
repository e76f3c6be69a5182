import { billing } from "./billing/index.js";
import { blog } from "./blog/index.js";
import { codes } from "./codes/index.js";
import { community } from "./community/index.js";
import { deals } from "./deals/index.js";
import { games } from "./games/index.js";
import { coupons } from "./coupons/index.js";
import type { AnyServiceModule } from "./kit/runtime/module.js";
import { media } from "./media/index.js";
import { network } from "./network/index.js";
import { reviews } from "./reviews/index.js";
import { news } from "./news/index.js";
import { search } from "./search/index.js";
import { sources } from "./sources/index.js";
import { space } from "./space/index.js";
import { tips } from "./tips/index.js";
import { trade } from "./trade/index.js";
import { vip } from "./vip/index.js";

/** Every service the platform can run, by key. */
export const modules: AnyServiceModule[] = [
  network,
  billing,
  deals,
  coupons,
  tips,
  vip,
  trade,
  sources,
  games,
  codes,
  media,
  search,
  space,
  community,
  news,
  blog,
  reviews,
];
