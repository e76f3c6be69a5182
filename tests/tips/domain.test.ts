import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { ProfileSchema, WordFilterSchema } from "../../gen/pf/tips/v1/profiles_pb.js";
import { checkAgainstProfile, deliveryOnSettle, requireMedia } from "../../services/tips/domain/checkouts.js";
import { matchesWordFilter, mayModerate } from "../../services/tips/domain/profiles.js";

const usd = (minorUnits: bigint) => ({ minorUnits, currency: "USD" });
const codeOf = (work: () => void) => {
  try {
    work();
    return "ok";
  } catch (error) {
    return (error as { details: { value: { code: string } }[] }).details[0].value.code;
  }
};

describe("the word filter", () => {
  const filter = create(WordFilterSchema, { words: ["spoiler", "bad word"] });
  it.each([
    ["no SPOILER please", true],
    ["a bad word here", true],
    ["spoilers are fine", false],
    ["unspoiler", false],
    ["", false],
    ["spoiler!", true],
  ])("%j → %s", (message, held) => expect(matchesWordFilter(filter, message)).toBe(held));
  it("matches nothing without words", () => expect(matchesWordFilter(undefined, "anything")).toBe(false));
});

describe("the creator's profile rules", () => {
  const profile = create(ProfileSchema, {
    accepting: true,
    minimums: { tip: usd(100n) },
    mediaRequests: { enabled: true, allowedHosts: ["youtube.com"], minimum: usd(300n), maxSeconds: 60 },
  });
  const media = (url: string, seconds = 30) => requireMedia("media_request", url, seconds);
  it.each([
    [
      "a tip at the minimum",
      () => checkAgainstProfile(profile, "tip", { currency: "USD", amount: 100n }, undefined),
      "ok",
    ],
    [
      "a tip under it",
      () => checkAgainstProfile(profile, "tip", { currency: "USD", amount: 99n }, undefined),
      "tips.below_minimum",
    ],
    [
      "a paid message without a minimum",
      () => checkAgainstProfile(profile, "paid_message", { currency: "EUR", amount: 1n }, undefined),
      "ok",
    ],
    [
      "media from a subdomain of an allowed host",
      () =>
        checkAgainstProfile(
          profile,
          "media_request",
          { currency: "USD", amount: 300n },
          media("https://m.youtube.com/x"),
        ),
      "ok",
    ],
    [
      "media from a look-alike host",
      () =>
        checkAgainstProfile(
          profile,
          "media_request",
          { currency: "USD", amount: 300n },
          media("https://notyoutube.com/x"),
        ),
      "tips.media_host_not_allowed",
    ],
    [
      "media too long",
      () =>
        checkAgainstProfile(
          profile,
          "media_request",
          { currency: "USD", amount: 300n },
          media("https://youtube.com/x", 61),
        ),
      "tips.media_too_long",
    ],
    [
      "media in another currency",
      () =>
        checkAgainstProfile(
          profile,
          "media_request",
          { currency: "EUR", amount: 300n },
          media("https://youtube.com/x"),
        ),
      "tips.currency_not_accepted",
    ],
    [
      "no profile",
      () => checkAgainstProfile(undefined, "tip", { currency: "USD", amount: 100n }, undefined),
      "tips.not_accepting",
    ],
  ])("%s: %s", (_name, work, code) => expect(codeOf(work)).toBe(code));
});

describe("delivery on settlement", () => {
  it("queues media requests, delivers the rest, suppresses what is held", () => {
    expect(deliveryOnSettle("media_request", "visible")).toBe("queued");
    expect(deliveryOnSettle("tip", "visible")).toBe("delivered");
    expect(deliveryOnSettle("paid_message", "held")).toBe("suppressed");
  });
});

describe("moderators", () => {
  const profile = create(ProfileSchema, { moderators: { subjects: ["usr_mod"] } });
  it("are the creator and the listed people", () => {
    expect(mayModerate(profile, "usr_c", "usr_c")).toBe(true);
    expect(mayModerate(profile, "usr_c", "usr_mod")).toBe(true);
    expect(mayModerate(profile, "usr_c", "usr_x")).toBe(false);
    expect(mayModerate(undefined, "usr_c", "usr_mod")).toBe(false);
  });
});
