import { getOption, hasOption, type DescService } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { http as httpOption } from "../../gen/google/api/annotations_pb.js";
import { ContentAccess } from "../../gen/pf/v1/content_pb.js";
import { designed } from "../../gen/pf/v1/options_pb.js";
import { ProblemSchema } from "../../gen/pf/v1/problem_pb.js";
import type { TokenClaims } from "../../services/kit/auth/tokens.js";
import type { TestPlatform } from "./platform.js";

/**
 * The refusals of an owner's CheckContentAccess (`proto/pf/v1/content.proto`): designed, no HTTP route, internal,
 * the community service only with the owner's `<key>.content.check`; community gets an answer. `missing` names an
 * object of a kind the owner answers that does not exist: not found.
 */
export function describeContentAccess(
  t: TestPlatform,
  service: DescService,
  capability: string,
  missing: { kind: string; id: string },
) {
  const [method] = service.methods;
  const community: TokenClaims = { kind: "service", svc: "community", caps: [capability] };

  /** The auth.* code a caller meets, "answered" once the handler answered. */
  const outcome = async (claims: TokenClaims | undefined) => {
    const token = claims ? await t.token(claims) : undefined;
    const client = t.client(service, token) as unknown as Record<string, (r: object) => Promise<unknown>>;
    try {
      await client[method.localName](missing);
      return "answered";
    } catch (error) {
      const [problem] = ConnectError.from(error).findDetails(ProblemSchema);
      return problem?.code ?? String(error);
    }
  };

  describe(`${service.name}.${method.name}`, () => {
    it("is designed, bound to no HTTP route, its one RPC", () => {
      expect(service.methods).toHaveLength(1);
      expect(getOption(method, designed)).toBe(true);
      expect(hasOption(method, httpOption)).toBe(false);
    });

    it("refuses everyone but community holding the capability: no token, other services, people, apps, mods", async () => {
      expect(await outcome(undefined)).toBe("auth.required");
      expect(await outcome({ ...community, svc: "web" })).toBe("auth.service_not_allowed");
      expect(await outcome({ ...community, caps: ["other.capability"] })).toBe("auth.capability_missing");
      expect(await outcome({ kind: "user", sub: "usr_a1" })).toBe("auth.internal_only");
      expect(await outcome({ kind: "app", app_id: "a", fp: true, caps: [capability] })).toBe("auth.internal_only");
      expect(await outcome({ ...community, mod: "mod_1" })).toBe("auth.never_to_mods");
    });

    it("answers community: not found for a missing object and for a kind the owner does not hold", async () => {
      const client = t.client(service, await t.token(community)) as unknown as Record<
        string,
        (r: object) => Promise<{ access: ContentAccess }>
      >;
      expect((await client[method.localName](missing)).access).toBe(ContentAccess.NOT_FOUND);
      expect((await client[method.localName]({ ...missing, kind: "unheld" })).access).toBe(ContentAccess.NOT_FOUND);
    });
  });
}
