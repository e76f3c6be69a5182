import type { TokenClaims } from "../../services/kit/auth/tokens.js";
import type { TestPlatform } from "../support/platform.js";

/** The audience every codes route takes. */
export const AUD = "codes";

/** A valid app manifest at a version. */
export const appManifest = (version: string, extra: Record<string, unknown> = {}) => ({
  kind: "app",
  name: "Overlay Kit",
  version,
  ...extra,
});

/** An app's own token for the release-metadata audience with both capabilities (claims override). */
export const appClaims = (app: string, claims: Partial<TokenClaims> = {}): TokenClaims => ({
  kind: "app",
  app_id: app,
  caps: ["codes.release.manage", "codes.release.read"],
  aud: AUD,
  ...claims,
});

let apps = 0;

/** A fresh app id, so tests in one file never share releases. */
export const freshApp = () => `app${Date.now().toString(36)}${apps++}`;

/** Helpers over one test platform: create, and create-then-act, as an app. */
export function codesCalls(t: TestPlatform) {
  const as = async (app: string) => t.token(appClaims(app));
  return {
    as,
    async create(app: string, body: Record<string, unknown>, token?: string) {
      return t.http("POST", `/codes/api/v1/apps/${app}/releases`, { token: token ?? (await as(app)), body });
    },
    async act(app: string, id: string, action: string, body: Record<string, unknown> = {}, token?: string) {
      return t.http("POST", `/codes/api/v1/releases/${id}/${action}`, { token: token ?? (await as(app)), body });
    },
    /** A release of `app` created (draft) and, unless `draft`, published; answers its id. */
    async release(app: string, version: string, { draft = false } = {}) {
      const created = await this.create(app, { manifest: appManifest(version), compatibility: ">=1.0.0 <2.0.0" });
      if (created.status !== 201) throw new Error(`create answered ${created.status} ${JSON.stringify(created.body)}`);
      const id = created.body.release.id as string;
      if (!draft) {
        const published = await this.act(app, id, "publish");
        if (published.status !== 200) throw new Error(`publish answered ${published.status}`);
      }
      return id;
    },
  };
}
