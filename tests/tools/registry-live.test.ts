import { describe, expect, it } from "vitest";
import { Catalogue } from "../../services/tools/catalogue/index.js";
import { assertLive, liveStatus } from "../../services/tools/families/live.js";
import { toolsSettings } from "../../services/tools/settings.js";
import { loadConfig } from "../../services/kit/runtime/config.js";

/** Live status from what runs each family in this process, with FFmpeg named where there is none. */
const settings = toolsSettings(loadConfig({ PF_TOOLS_FFMPEG: "/nonexistent/ffmpeg" }));
const audio = new Catalogue().available("audio.process");
/** A page-only audio tool: nothing here runs it, so no missing program makes it unavailable. */
const pageOnly = { ...audio, id: "audio.waveform", api: false, input: false as const };

describe("live status", () => {
  it("is unavailable for a tool whose program is missing, with a reason and a cause for the log", async () => {
    const live = await liveStatus(settings, { tools: [audio, pageOnly] } as unknown as Catalogue);
    expect(live.of(audio)).toEqual({
      status: "unavailable",
      reason: expect.stringContaining("FFmpeg"),
      cause: expect.stringContaining("/nonexistent/ffmpeg"),
    });
    expect(() => assertLive(live, audio)).toThrow(/does not run here now/);
  });

  it("is live for a tool without an API, whatever its family", async () => {
    const live = await liveStatus(settings, { tools: [audio, pageOnly] } as unknown as Catalogue);
    expect(live.of(pageOnly)).toEqual({ status: "live" });
    expect(() => assertLive(live, pageOnly)).not.toThrow();
  });

  it("is live for inline tools and for families whose libraries work here", async () => {
    const catalogue = new Catalogue();
    const live = await liveStatus(settings, catalogue);
    for (const id of ["text.hash", "img.process", "docs.process"])
      expect(live.of(catalogue.available(id)), id).toEqual({ status: "live" });
  });
});
