import { ai } from "../services/ai/index.js";
import { billing } from "../services/billing/index.js";
import { blog } from "../services/blog/index.js";
import { bot } from "../services/bot/index.js";
import { codes } from "../services/codes/index.js";
import { community } from "../services/community/index.js";
import { deals } from "../services/deals/index.js";
import { games } from "../services/games/index.js";
import { host } from "../services/host/index.js";
import { coupons } from "../services/coupons/index.js";
import type { AnyServiceModule } from "../services/kit/service/module.js";
import { live } from "../services/live/index.js";
import { media } from "../services/media/index.js";
import { network } from "../services/network/index.js";
import { restream } from "../services/restream/index.js";
import { reviews } from "../services/reviews/index.js";
import { run } from "../services/run/index.js";
import { news } from "../services/news/index.js";
import { search } from "../services/search/index.js";
import { sources } from "../services/sources/index.js";
import { space } from "../services/space/index.js";
import { tips } from "../services/tips/index.js";
import { tools } from "../services/tools/index.js";
import { trade } from "../services/trade/index.js";
import { vip } from "../services/vip/index.js";

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
  bot,
  run,
  host,
  tools,
  ai,
  restream,
  live,
];
