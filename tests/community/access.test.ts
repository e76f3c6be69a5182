import { describe, expect, it } from "vitest";
import { CommentService } from "../../gen/pf/community/v1/comments_pb.js";
import { ForumService } from "../../gen/pf/community/v1/forum_pb.js";
import { ModerationService } from "../../gen/pf/community/v1/moderation_pb.js";
import { PasteService } from "../../gen/pf/community/v1/pastes_pb.js";
import { PulseService } from "../../gen/pf/community/v1/pulse_pb.js";
import { RelayService } from "../../gen/pf/community/v1/relays_pb.js";
import { designed } from "../../gen/pf/v1/options_pb.js";
import { Actor, Visibility } from "../../gen/pf/v1/options_pb.js";
import { getOption } from "@bufbuild/protobuf";
import {
  bindingOf,
  describeMalformedInput,
  describeRefusals,
  itWithSpec,
  routesOf,
  type RouteCall,
} from "../support/access.js";
import { usePlatform } from "../support/platform.js";

// The matrix's service token is the tips service's: pulse refs name `tips`, its own service.
const ref = { service: "community", kind: "paste", id: "pas_1" };

/** One valid call per route; the refusals vary only the caller. */
const calls: Record<string, RouteCall> = {
  createPaste: { method: "POST", path: "/community/api/pastes", body: { title: "A", body: "x" } },
  editPaste: { method: "PUT", path: "/community/api/pastes/a-paste", body: { title: "B" } },
  deletePaste: { method: "DELETE", path: "/community/api/pastes/a-paste" },
  forkPaste: { method: "POST", path: "/community/api/pastes/a-paste/fork", body: {} },
  likePaste: { method: "POST", path: "/community/api/pastes/a-paste/like", body: {} },
  unlikePaste: { method: "DELETE", path: "/community/api/pastes/a-paste/like" },
  copyPaste: { method: "POST", path: "/community/api/pastes/a-paste/copy", body: {} },
  commentOnPaste: { method: "POST", path: "/community/api/pastes/a-paste/comments", body: { body: "hi" } },
  getPaste: { method: "GET", path: "/community/api/pastes/a-paste" },
  getRawPaste: { method: "GET", path: "/community/api/pastes/a-paste/raw" },
  listPastes: { method: "GET", path: "/community/api/pastes?owner=usr_a1" },
  listPasteComments: { method: "GET", path: "/community/api/pastes/a-paste/comments" },
  censorPaste: { method: "POST", path: "/community/api/pastes/a-paste/censor", body: { reason: "spam" } },
  deletePasteComment: { method: "DELETE", path: "/community/api/pastes/a-paste/comments/cmt_1?reason=spam" },
  bulkModeratePastes: {
    method: "POST",
    path: "/community/api/pastes/bulk",
    body: { action: "censor", slugs: ["a-paste"], reason: "spam" },
  },
  listModerationLog: { method: "GET", path: "/community/api/v1/moderation/log" },
  deleteComment: { method: "DELETE", path: "/community/api/v1/comments/cmt_1" },
  voteOnComment: { method: "POST", path: "/community/api/v1/comments/cmt_1/votes", body: { value: 1 } },
  getThread: { method: "GET", path: "/community/api/v1/comments/threads/cth_1" },
  createComment: { method: "POST", path: "/community/api/v1/comments/threads/cth_1/comments", body: { body: "hi" } },
  setThreadVisibility: {
    method: "PUT",
    path: "/community/api/v1/comments/threads/cth_1/visibility",
    body: { visibility: "locked", reason: "heated" },
  },
  resolveThread: { method: "POST", path: "/community/api/v1/comments/threads/resolve", body: { ref } },
  editPost: { method: "PUT", path: "/community/api/v1/posts/pst_1", body: { body: "edited" } },
  deletePost: { method: "DELETE", path: "/community/api/v1/posts/pst_1" },
  createThread: {
    method: "POST",
    path: "/community/api/v1/spaces/general/threads",
    body: { title: "T", body: "first" },
  },
  replyToThread: { method: "POST", path: "/community/api/v1/threads/thr_1/posts", body: { body: "reply" } },
  voteOnThread: { method: "POST", path: "/community/api/v1/threads/thr_1/votes", body: { value: 1 } },
  pinThread: { method: "PUT", path: "/community/api/v1/threads/thr_1/pin", body: { value: true, reason: "faq" } },
  lockThread: { method: "PUT", path: "/community/api/v1/threads/thr_1/lock", body: { value: true, reason: "done" } },
  getPulse: { method: "GET", path: "/community/api/v1/pulse" },
  publishPulseItem: {
    method: "POST",
    path: "/community/api/v1/pulse/items",
    body: {
      ref: { service: "tips", kind: "page", id: "p1" },
      title: "T",
      url: "https://example.com/p1",
      origin: "system",
      occurred_at: "2026-01-01T00:00:00Z",
    },
  },
  retractPulseItem: { method: "DELETE", path: "/community/api/v1/pulse/items/tips/page/p1" },
  listRelays: { method: "GET", path: "/community/api/v1/relays" },
  getRelay: { method: "GET", path: "/community/api/v1/relays/mods" },
  putRelay: {
    method: "PUT",
    path: "/community/api/v1/relays/mods",
    body: { platform: "discord", webhook_url: "https://discord.com/api/webhooks/1/abcd", scope: "*", reason: "r" },
  },
  deleteRelay: { method: "DELETE", path: "/community/api/v1/relays/mods?reason=r" },
};

const services = [PasteService, CommentService, ModerationService, ForumService, PulseService, RelayService];
const routes = routesOf(...services);
// Space answers the forum routes community forwards to it.
const t = usePlatform({ services: ["community", "space"] });

/** Path variables as the spec writes them. */
const specPath = (template: string) => template.replace("{comment_id}", "{commentId}");

describe("every community route", () => {
  it("has a call here (36 routes: 21 documented, 15 designed)", () => {
    expect(routes).toHaveLength(36);
    expect(Object.keys(calls).sort()).toEqual(routes.map((route) => route.name).sort());
    expect(routes.filter((route) => getOption(route.method, designed))).toHaveLength(15);
  });

  itWithSpec(
    "matches routes.tsv (21 documented routes: method, path, capabilities, visibilities)",
    "community",
    (documented) => {
      expect(documented).toHaveLength(21);
      const bound = routes.map((route) => {
        const visibilities = route.rules.map((rule) => Visibility[rule.visibility].toLowerCase().replace("_", "-"));
        const caps = route.rules.flatMap((rule) => rule.capabilities);
        return {
          ...bindingOf(route),
          template: specPath(bindingOf(route).template),
          caps: [...new Set(caps)].sort().join(", "),
          visibility: [...new Set(visibilities)].sort().join(", "),
          designed: getOption(route.method, designed),
        };
      });
      // The spec lists a two-rule row's capabilities and visibilities in its own order: compared as sets.
      const sorted = (list: string) => list.split(", ").sort().join(", ");
      for (const [, verb, path, caps, visibility] of documented) {
        expect(bound, `${verb} ${path}`).toContainEqual({
          verb,
          template: path,
          caps: sorted(caps),
          visibility: sorted(visibility),
          designed: false,
        });
      }
    },
  );

  it("two-rule rows: a moderator (staff, internal) tried first, the writer's own-object rule last", () => {
    for (const name of ["deleteComment", "editPost", "deletePost"]) {
      const route = routes.find((each) => each.name === name)!;
      expect(route.rules[0], name).toMatchObject({
        name: "moderate",
        visibility: Visibility.INTERNAL,
        actor: Actor.PLATFORM_STAFF,
        capabilities: ["community.comment.moderate"],
      });
      expect(route.rules.at(-1), name).toMatchObject({ name: "own", actor: Actor.PERSON, actingSubject: true });
    }
  });

  it("pulse writes are for services only; staff routes are internal", () => {
    for (const route of routes) {
      if (route.rule.capabilities.includes("community.pulse.write"))
        expect(route.rule, route.name).toMatchObject({ noPeople: true, neverToApps: true });
      if (route.rule.capabilities.includes("community.paste.moderate"))
        expect(route.rule, route.name).toMatchObject({ visibility: Visibility.INTERNAL, actor: Actor.PLATFORM_STAFF });
    }
  });
});

describeRefusals(t, routes, calls);
describeMalformedInput(t, routes, calls);
