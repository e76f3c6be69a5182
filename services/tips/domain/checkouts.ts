import type { Profile } from "../../../gen/pf/tips/v1/profiles_pb.js";
import type { Money } from "../../../gen/pf/v1/money_pb.js";
import { invalid, problem } from "../../kit/handler/problem.js";
import { requireUrl } from "../../kit/handler/urls.js";

/** What a checkout pays for. */
export type PaidKind = "tip" | "paid_message" | "media_request";
export type InteractionKind = PaidKind | "external";

/** Payment states, from billing (external: paid outside the platform). */
export type PaymentState = "pending" | "settled" | "declined" | "external";
/** Delivery states (effects), separate from payment. */
export type DeliveryState = "pending" | "queued" | "delivered" | "suppressed" | "canceled";
export type Moderation = "visible" | "hidden" | "held";

export interface Amount {
  currency: string;
  amount: bigint;
}

/** The media of a media request. */
export interface Media {
  url: string;
  seconds: number;
}

/** The supporter's message (at most 500 characters, by the contract): required for a paid message. */
export function requireMessage(kind: PaidKind, message: string): string {
  const text = message.trim();
  if (kind === "paid_message" && text === "") throw invalid("message", "A paid message needs its message.");
  return text;
}

/** A media request's media: an absolute http(s) URL, and its length (1 or more, by the contract). */
export function requireMedia(kind: PaidKind, url: string, seconds: number): Media | undefined {
  if (kind !== "media_request") return undefined;
  requireUrl("media_url", url, ["https", "http"]);
  return { url, seconds };
}

function hostOf(url: string): string {
  return new URL(url).hostname.toLowerCase().replace(/\.$/, "");
}

function minimumOf(profile: Profile, kind: PaidKind): Money | undefined {
  if (kind === "tip") return profile.minimums?.tip;
  if (kind === "paid_message") return profile.minimums?.paidMessage;
  return profile.mediaRequests?.minimum;
}

/**
 * The creator's profile decides whether a payment is taken: accepting on, the
 * amount at least the creator's minimum for its kind (in that currency), and
 * for a media request the creator's media settings (enabled, allowed host,
 * maximum length). Tips never price: the amount is the supporter's.
 */
export function checkAgainstProfile(
  profile: Profile | undefined,
  kind: PaidKind,
  amount: Amount,
  media: Media | undefined,
): void {
  if (!profile || !profile.accepting)
    throw problem(409, "tips.not_accepting", "This creator does not accept tips now.");
  if (kind === "media_request") {
    const settings = profile.mediaRequests;
    if (!settings?.enabled) throw problem(409, "tips.media_requests_off", "This creator does not take media requests.");
    const host = hostOf(media!.url);
    if (!settings.allowedHosts.some((allowed) => host === allowed || host.endsWith(`.${allowed}`))) {
      throw problem(422, "tips.media_host_not_allowed", `This creator takes no media from ${host}.`, {
        field: "media_url",
        allowed_hosts: settings.allowedHosts,
      });
    }
    if (settings.maxSeconds > 0 && media!.seconds > settings.maxSeconds) {
      throw problem(422, "tips.media_too_long", `This creator takes media of at most ${settings.maxSeconds} seconds.`, {
        field: "media_seconds",
        max_seconds: settings.maxSeconds,
      });
    }
  }
  const minimum = minimumOf(profile, kind);
  if (minimum) {
    if (minimum.currency !== amount.currency) {
      throw problem(
        422,
        "tips.currency_not_accepted",
        `This creator takes ${kind.replace("_", " ")}s in ${minimum.currency}.`,
        { field: "amount.currency", currency: minimum.currency },
      );
    }
    if (amount.amount < minimum.minorUnits) {
      throw problem(
        422,
        "tips.below_minimum",
        `The creator's minimum is ${minimum.minorUnits} ${minimum.currency} minor units.`,
        {
          field: "amount.minor_units",
          minimum: { minor_units: minimum.minorUnits.toString(), currency: minimum.currency },
        },
      );
    }
  }
}

/** The delivery state an interaction takes when its payment settles. */
export function deliveryOnSettle(kind: InteractionKind, moderation: Moderation): DeliveryState {
  if (moderation !== "visible") return "suppressed";
  return kind === "media_request" ? "queued" : "delivered";
}
