import { describe, expect, it } from "vitest";
import { claimSlug, dropSlugs, resolveSlug } from "../../services/kit/slugs/slugs.js";
import { MAX_SLUG_LENGTH, slugify } from "../../services/kit/slugs/slugify.js";
import { usePlatform } from "../support/platform.js";

const t = usePlatform({ services: ["network"] });
const at = new Date("2026-11-27T12:00:00Z");
let scopes = 0;
/** A scope of its own per test: the table is shared by the file. */
const newScope = () => `threads:spc_${++scopes}${Date.now().toString(36)}`;

const ctx = () => t.platform.contexts.get("network")!;
const claim = (scope: string, id: string, text: string, reserved?: string[]) =>
  ctx().transaction((em) => claimSlug(em, scope, id, text, { at, reserved }));
const resolve = (scope: string, slug: string) => ctx().transaction((em) => resolveSlug(em, scope, slug));

describe("slugify", () => {
  it.each([
    ["Hello, World!", "hello-world"],
    ["  Crème brûlée à la carte  ", "creme-brulee-a-la-carte"],
    ["Straße ÆØ Œuvre Łódź", "strasse-aeo-oeuvre-lodz"],
    ["ﬁ ① Ｆｕｌｌｗｉｄｔｈ", "fi-1-fullwidth"],
    ["a -- b__c", "a-b-c"],
    ["<script>alert(1)</script>", "script-alert-1-script"],
    ["🙂🙂", ""],
  ])("%s → %s", (text, slug) => {
    expect(slugify(text)).toBe(slug);
  });

  it.each([
    ["Привет, мир! Щука и ёж", "privet-mir-shchuka-i-yozh"],
    ["Україна їжак", "ukrayina-yizhak"],
    ["Καλημέρα κόσμε", "kalimera-kosme"],
    ["中文标题测试", "zhong-wen-biao-ti-ce-shi"],
    ["日本語のタイトル", "ri-ben-yu-notaitoru"],
    ["한국어 제목", "hangugeo-jemog"],
    ["Tiếng Việt: Новости 2026", "tieng-viet-novosti-2026"],
  ])("spells the non-Latin title %s as %s", (text, slug) => {
    expect(slugify(text)).toBe(slug);
  });

  it("bounds the length at a dash and takes a fallback for text with nothing to spell", () => {
    const long = slugify("word ".repeat(40));
    expect(long.length).toBeLessThanOrEqual(MAX_SLUG_LENGTH);
    expect(long).toMatch(/^(word-)*word$/);
    expect(slugify("x".repeat(200)).length).toBe(MAX_SLUG_LENGTH);
    expect(slugify("🙂 ✨", "thr-01abc")).toBe("thr-01abc");
    expect(slugify("Ж".repeat(100)).length).toBeLessThanOrEqual(MAX_SLUG_LENGTH);
  });
});

describe("claimSlug and resolveSlug", () => {
  it("gives 20 concurrent creates of one title in one scope 20 distinct slugs, -2 … -20", async () => {
    const scope = newScope();
    const slugs = await Promise.all(Array.from({ length: 20 }, (_, i) => claim(scope, `thr_c${i}`, "Same Title")));
    expect(new Set(slugs).size).toBe(20);
    expect([...slugs].sort()).toEqual(
      ["same-title", ...Array.from({ length: 19 }, (_, i) => `same-title-${i + 2}`)].sort(),
    );
    // Another scope is another namespace.
    expect(await claim(newScope(), "thr_other", "Same Title")).toBe("same-title");
  });

  it("keeps the slug when the title is saved again, and suffixes within the length bound", async () => {
    const scope = newScope();
    expect(await claim(scope, "thr_a", "Stable")).toBe("stable");
    expect(await claim(scope, "thr_a", "Stable!")).toBe("stable");
    expect(await resolve(scope, "stable")).toEqual({ objectId: "thr_a", slug: "stable", moved: false });
    const long = "word ".repeat(40);
    const first = await claim(scope, "thr_l1", long);
    const second = await claim(scope, "thr_l2", long);
    expect(second).toMatch(/-2$/);
    expect(second.length).toBeLessThanOrEqual(MAX_SLUG_LENGTH);
    expect(second).not.toBe(first);
  });

  it("collapses chains: a → b → c leaves a and b redirecting to c in one hop", async () => {
    const scope = newScope();
    await claim(scope, "thr_x", "Alpha");
    await claim(scope, "thr_x", "Beta");
    await claim(scope, "thr_x", "Gamma");
    expect(await resolve(scope, "alpha")).toEqual({ objectId: "thr_x", slug: "gamma", moved: true });
    expect(await resolve(scope, "beta")).toEqual({ objectId: "thr_x", slug: "gamma", moved: true });
    expect(await resolve(scope, "gamma")).toEqual({ objectId: "thr_x", slug: "gamma", moved: false });
    expect(await resolve(scope, "delta")).toBeUndefined();
  });

  it("never loops: renaming back to an old slug takes it back and ends that redirect", async () => {
    const scope = newScope();
    await claim(scope, "thr_y", "Alpha");
    await claim(scope, "thr_y", "Beta");
    expect(await claim(scope, "thr_y", "Alpha")).toBe("alpha");
    expect(await resolve(scope, "alpha")).toEqual({ objectId: "thr_y", slug: "alpha", moved: false });
    expect(await resolve(scope, "beta")).toEqual({ objectId: "thr_y", slug: "alpha", moved: true });
  });

  it("lets a new object reuse an old slug: it answers the new owner, not the redirect", async () => {
    const scope = newScope();
    await claim(scope, "thr_old", "Launch");
    await claim(scope, "thr_old", "Launch Postponed");
    expect(await claim(scope, "thr_new", "Launch")).toBe("launch");
    expect(await resolve(scope, "launch")).toEqual({ objectId: "thr_new", slug: "launch", moved: false });
    expect(await resolve(scope, "launch-postponed")).toEqual({
      objectId: "thr_old",
      slug: "launch-postponed",
      moved: false,
    });
    // But never a current slug of another object.
    expect(await claim(scope, "thr_third", "Launch")).toBe("launch-2");
  });

  it("suffixes reserved words, the kit's and the scope's own, spells non-Latin titles, and falls back to the id for text with nothing to spell", async () => {
    const scope = newScope();
    expect(await claim(scope, "thr_r1", "New")).toBe("new-2");
    expect(await claim(scope, "thr_r2", "Feed")).toBe("feed-2");
    expect(await claim(scope, "thr_r3", "Bulk")).toBe("bulk-2");
    expect(await claim(scope, "thr_r4", "Top", ["top", "hot"])).toBe("top-2");
    expect(await claim(scope, "thr_cyr", "Новости недели")).toBe("novosti-nedeli");
    expect(await claim(scope, "thr_01JABC", "🙂🙂")).toBe("01jabc");
  });

  it("frees an object's slugs when it is dropped", async () => {
    const scope = newScope();
    await claim(scope, "thr_d", "Gone");
    await claim(scope, "thr_d", "Gone Again");
    await ctx().transaction((em) => dropSlugs(em, scope, "thr_d"));
    expect(await resolve(scope, "gone")).toBeUndefined();
    expect(await claim(scope, "thr_e", "Gone Again")).toBe("gone-again");
  });
});
