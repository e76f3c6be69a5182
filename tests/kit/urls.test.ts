import { describe, expect, it } from "vitest";
import { problemOf } from "../../services/kit/handler/problem.js";
import { optionalUrl, requireUrl, URL_MAX } from "../../services/kit/handler/urls.js";

const refusal = (work: () => unknown) => {
  try {
    work();
    return undefined;
  } catch (error) {
    const problem = problemOf(error);
    return `${problem.code} ${String(problem.extensions?.field as string | undefined)}`;
  }
};

describe("URLs a caller sends", () => {
  it("are absolute, of the schemes allowed (https unless said), at most URL_MAX characters; 400 naming the field otherwise", () => {
    expect(requireUrl("image_url", "https://cdn.example/a.png").hostname).toBe("cdn.example");
    expect(refusal(() => requireUrl("image_url", "http://cdn.example/a.png"))).toBe("request.invalid image_url");
    expect(requireUrl("return_url", "http://app.example/back", ["https", "http"]).protocol).toBe("http:");
    expect(refusal(() => requireUrl("media_url", "ftp://x.example/v", ["https", "http"]))).toBe(
      "request.invalid media_url",
    );
    expect(refusal(() => requireUrl("media_url", "/relative/path", ["https", "http"]))).toBe(
      "request.invalid media_url",
    );
    expect(refusal(() => requireUrl("media_url", "javascript:alert(1)", ["https", "http"]))).toBe(
      "request.invalid media_url",
    );
    expect(refusal(() => requireUrl("image_url", `https://x.example/${"a".repeat(URL_MAX)}`))).toBe(
      "request.invalid image_url",
    );
  });

  it("may be left out when optional", () => {
    expect(optionalUrl("sound_url", "")).toBe("");
    expect(optionalUrl("sound_url", "https://cdn.example/ding.mp3")).toBe("https://cdn.example/ding.mp3");
    expect(refusal(() => optionalUrl("sound_url", "nope"))).toBe("request.invalid sound_url");
  });
});
