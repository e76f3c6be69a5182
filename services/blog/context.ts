import type { Client } from "@connectrpc/connect";
import { AiService } from "../../gen/pf/ai/v1/ai_pb.js";
import { CommentService } from "../../gen/pf/community/v1/comments_pb.js";
import { NetworkService } from "../../gen/pf/network/v1/network_pb.js";
import { VipService } from "../../gen/pf/vip/v1/vip_pb.js";
import type { ServiceContext } from "../kit/service/module.js";
import { blogSettings, type BlogSettings } from "./settings.js";

/** Built once per blog instance: its settings and the clients of the services it calls (never in a transaction). */
export interface BlogContext extends ServiceContext {
  settings: BlogSettings;
  /** The default handle: the network username (identity.subject.resolve). */
  network: Client<typeof NetworkService>;
  /** Members-only posts: the blog owner's vip members (vip.entitlement.check). */
  vip: Client<typeof VipService>;
  /** A deleted post's comment thread hidden (community.comment.write, community.comment.moderate). */
  community: Client<typeof CommentService>;
  /** The run AI output names, verified (ai.run.read). */
  ai: Client<typeof AiService>;
}

export function blogContext(base: ServiceContext): BlogContext {
  return {
    ...base,
    settings: blogSettings(base.config),
    network: base.client(NetworkService),
    vip: base.client(VipService),
    community: base.client(CommentService),
    ai: base.client(AiService),
  };
}
