import { describe, expect, it } from "vitest";
import { declarableRefusal } from "../../services/kit/rpc/relations.js";

/** What a relation may refuse with: the kit's vocabulary or the declaring service's own code, never enforcement's. */
describe("a relation's declared refusal", () => {
  it("is one of the kit's relation codes, or a service's own code (blog.member_required)", () => {
    for (const code of [
      "auth.editor_required",
      "auth.role_required",
      "auth.staff_required",
      "blog.member_required",
      "blog.owner_required",
      "integration.github.owner_only",
    ])
      expect(declarableRefusal(code), code).toBe(true);
  });

  it("is never another auth. or relation. code, nor something that is no code", () => {
    for (const code of [
      "auth.capability_missing",
      "auth.person_required",
      "relation.unavailable",
      "member_required",
      "Blog.x",
      "",
    ])
      expect(declarableRefusal(code), code).toBe(false);
  });
});
