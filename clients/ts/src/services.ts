import { AiService } from "../../../gen/pf/ai/v1/ai_pb.js";
import { RestreamService } from "../../../gen/pf/restream/v1/restream_pb.js";
import { RestreamWorkerService } from "../../../gen/pf/restream/v1/worker_pb.js";
import { BillingAdminService } from "../../../gen/pf/billing/v1/admin_pb.js";
import { BillingService } from "../../../gen/pf/billing/v1/billing_pb.js";
import { BillingUsageService } from "../../../gen/pf/billing/v1/usage_pb.js";
import { BlogService } from "../../../gen/pf/blog/v1/blogs_pb.js";
import { BotService } from "../../../gen/pf/bot/v1/bot_pb.js";
import { BotLinkService } from "../../../gen/pf/bot/v1/link_service_pb.js";
import { BlogContentService } from "../../../gen/pf/blog/v1/content_pb.js";
import { PostService } from "../../../gen/pf/blog/v1/posts_pb.js";
import { CodesService } from "../../../gen/pf/codes/v1/codes_pb.js";
import { CommentService } from "../../../gen/pf/community/v1/comments_pb.js";
import { ForumService } from "../../../gen/pf/community/v1/forum_pb.js";
import { ModerationService } from "../../../gen/pf/community/v1/moderation_pb.js";
import { PasteService } from "../../../gen/pf/community/v1/pastes_pb.js";
import { PulseService } from "../../../gen/pf/community/v1/pulse_pb.js";
import { RelayService } from "../../../gen/pf/community/v1/relays_pb.js";
import { CouponsService } from "../../../gen/pf/coupons/v1/coupons_pb.js";
import { DealsService } from "../../../gen/pf/deals/v1/deals_pb.js";
import { GamesService } from "../../../gen/pf/games/v1/games_pb.js";
import { HostService } from "../../../gen/pf/host/v1/host_pb.js";
import { ToolsService } from "../../../gen/pf/tools/v1/tools_pb.js";
import { LiveService } from "../../../gen/pf/live/v1/live_pb.js";
import { MediaService } from "../../../gen/pf/media/v1/media_pb.js";
import { NetworkAdminService } from "../../../gen/pf/network/v1/admin_pb.js";
import { NetworkService } from "../../../gen/pf/network/v1/network_pb.js";
import { NewsAdminService } from "../../../gen/pf/news/v1/admin_pb.js";
import { NewsClusterService } from "../../../gen/pf/news/v1/clusters_pb.js";
import { NewsContentService } from "../../../gen/pf/news/v1/content_pb.js";
import { NewsSourcingService } from "../../../gen/pf/news/v1/sourcing_pb.js";
import { NewsStoryService } from "../../../gen/pf/news/v1/stories_pb.js";
import { ReviewsAdminService } from "../../../gen/pf/reviews/v1/admin_pb.js";
import { ReviewCorrectionsService } from "../../../gen/pf/reviews/v1/corrections_pb.js";
import { ReviewsService } from "../../../gen/pf/reviews/v1/entities_pb.js";
import { RunService } from "../../../gen/pf/run/v1/run_pb.js";
import { ReviewSignalsService } from "../../../gen/pf/reviews/v1/signals_pb.js";
import { ReviewSummariesService } from "../../../gen/pf/reviews/v1/summaries_pb.js";
import { SearchIndexService, SearchService } from "../../../gen/pf/search/v1/search_pb.js";
import { SourcesService } from "../../../gen/pf/sources/v1/sources_pb.js";
import { SpaceAdminService } from "../../../gen/pf/space/v1/admin_pb.js";
import { SpaceContentService } from "../../../gen/pf/space/v1/content_pb.js";
import { SpaceInternalService } from "../../../gen/pf/space/v1/internal_pb.js";
import { SpaceService } from "../../../gen/pf/space/v1/space_pb.js";
import { TipsOverlayService } from "../../../gen/pf/tips/v1/overlays_pb.js";
import { TipsOwnerService } from "../../../gen/pf/tips/v1/owners_pb.js";
import { TipsService } from "../../../gen/pf/tips/v1/tips_pb.js";
import { TradeAdminService } from "../../../gen/pf/trade/v1/admin_pb.js";
import { MarketContextService } from "../../../gen/pf/trade/v1/context_pb.js";
import { TradeService } from "../../../gen/pf/trade/v1/trade_pb.js";
import { VipService } from "../../../gen/pf/vip/v1/vip_pb.js";

/**
 * Every proto service the platform serves (platform/registry.ts, tested equal), by the name its client has on a
 * platform client: the service's name less `Service`, in lower camel case (`NetworkAdminService` → `networkAdmin`).
 */
export const services = {
  network: NetworkService,
  networkAdmin: NetworkAdminService,
  billing: BillingService,
  billingAdmin: BillingAdminService,
  billingUsage: BillingUsageService,
  deals: DealsService,
  coupons: CouponsService,
  tips: TipsService,
  tipsOverlay: TipsOverlayService,
  tipsOwner: TipsOwnerService,
  vip: VipService,
  trade: TradeService,
  marketContext: MarketContextService,
  tradeAdmin: TradeAdminService,
  sources: SourcesService,
  games: GamesService,
  codes: CodesService,
  media: MediaService,
  search: SearchService,
  searchIndex: SearchIndexService,
  space: SpaceService,
  spaceInternal: SpaceInternalService,
  spaceAdmin: SpaceAdminService,
  spaceContent: SpaceContentService,
  paste: PasteService,
  comment: CommentService,
  moderation: ModerationService,
  forum: ForumService,
  pulse: PulseService,
  relay: RelayService,
  newsCluster: NewsClusterService,
  newsStory: NewsStoryService,
  newsSourcing: NewsSourcingService,
  newsAdmin: NewsAdminService,
  newsContent: NewsContentService,
  blog: BlogService,
  post: PostService,
  blogContent: BlogContentService,
  reviews: ReviewsService,
  reviewSignals: ReviewSignalsService,
  reviewSummaries: ReviewSummariesService,
  reviewCorrections: ReviewCorrectionsService,
  reviewsAdmin: ReviewsAdminService,
  run: RunService,
  bot: BotService,
  botLink: BotLinkService,
  host: HostService,
  tools: ToolsService,
  ai: AiService,
  live: LiveService,
  restream: RestreamService,
  restreamWorker: RestreamWorkerService,
} as const;

export type PlatformServices = typeof services;
