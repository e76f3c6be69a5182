import semver from "semver";
import { invalid, problem } from "../../kit/handler/problem.js";

/** Where a release stands (the database's words). */
export type Status = "draft" | "published" | "deprecated" | "revoked";

/** What an app may do to one of its releases. */
export type Action = "publish" | "deprecate" | "revoke";

/** From which states each action goes: publish drafts, deprecate published releases, revoke anything not revoked. */
const FROM: Record<Action, readonly Status[]> = {
  publish: ["draft"],
  deprecate: ["published"],
  revoke: ["draft", "published", "deprecated"],
};

const TO: Record<Action, Status> = { publish: "published", deprecate: "deprecated", revoke: "revoked" };

/** The state an action leads to, or 409 codes.release_state: revoked is final, and nothing goes back. */
export function transition(status: Status, action: Action): Status {
  if (!FROM[action].includes(status)) {
    const final = status === "revoked" ? " Revoked is final: nothing follows it." : "";
    throw problem(
      409,
      "codes.release_state",
      `A ${status} release cannot be ${TO[action]}; ${action} takes ${FROM[action].join(" or ")} releases.${final}`,
      { release_status: status },
    );
  }
  return TO[action];
}

/** The app a token speaks for (sub `app:<id>`), or undefined for people and services. */
export function appOfSubject(sub: string): string | undefined {
  return sub.startsWith("app:") ? sub.slice(4) : undefined;
}

/** 403 codes.app_mismatch: releases are managed only by their own app's token. */
export function appMismatch(app: string) {
  return problem(
    403,
    "codes.app_mismatch",
    `Releases of ${app} are managed only with that app's own token (sub app:${app}).`,
    { app },
  );
}

/**
 * Versions equal by semver precedence are one version: build metadata
 * (`+build.5`) does not make another, so the key leaves it out.
 */
export function versionKey(version: string): string {
  const parsed = semver.parse(version)!;
  const pre = parsed.prerelease.length > 0 ? `-${parsed.prerelease.join(".")}` : "";
  return `${parsed.major}.${parsed.minor}.${parsed.patch}${pre}`;
}

/**
 * The release's compatibility range: the request's, else the manifest's; both
 * sent must agree. Required, and a valid semver range (at most 256
 * characters: the contract's rule and the manifest's schema).
 */
export function compatibilityOf(sent: string, inManifest: string | undefined): string {
  const range = sent.trim();
  if (range !== "" && inManifest !== undefined && inManifest.trim() !== range) {
    throw invalid("compatibility", "compatibility differs from the manifest's compatibility: send one, or both equal");
  }
  const chosen = range || inManifest?.trim() || "";
  if (chosen === "")
    throw invalid("compatibility", "compatibility (a semver range such as >=1.2.0 <2.0.0) is required");
  if (semver.validRange(chosen) === null) {
    throw invalid("compatibility", `compatibility ${JSON.stringify(chosen)} is not a semver range`);
  }
  return chosen;
}

/**
 * A deprecation's reason, trimmed: required here, as revoke shares the
 * request and takes none (the contract holds either to 500 characters).
 */
export function requireReason(reason: string): string {
  const text = reason.trim();
  if (text === "") throw invalid("reason", "reason is required to deprecate a release");
  return text;
}

/** What deprecate needs to know of a named replacement. */
export interface ReplacementFacts {
  id: string;
  app: string;
  status: string;
}

/**
 * A replacement must be a published release of the same app, other than the
 * one deprecated; otherwise 422 codes.replacement_invalid (another app's
 * release is refused the same as a missing one).
 */
export function checkReplacement(
  deprecated: { id: string; app: string },
  named: string,
  replacement: ReplacementFacts | null,
) {
  const refuse = (detail: string) =>
    problem(422, "codes.replacement_invalid", detail, { field: "replacement", replacement: named });
  if (replacement === null || replacement.app !== deprecated.app) {
    throw refuse("replacement must be a published release of the same app; there is no such release of this app.");
  }
  if (replacement.id === deprecated.id) throw refuse("A release cannot replace itself.");
  if (replacement.status !== "published") {
    throw refuse(`replacement must be a published release; ${replacement.id} is ${replacement.status}.`);
  }
}
