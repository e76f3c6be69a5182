import { describe, expect, it } from "vitest";
import { usePlatform } from "../support/platform.js";

/**
 * A platform whose FFmpeg setting names no program: the live status comes from what runs each family, so
 * audio.process says it is unavailable and why, its runs are refused, and the other families stay live.
 */
const t = usePlatform({ services: ["tools"], env: { PF_TOOLS_FFMPEG: "/nonexistent/ffmpeg" } });

const BASE = "/tools/api/v1/tools";

describe("a family whose program is missing", () => {
  it("reads audio.process as unavailable, saying FFmpeg is not installed", async () => {
    const answer = await t.http("GET", `${BASE}/audio.process`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ id: "audio.process", status: "unavailable" });
    expect(answer.body.status_reason).toMatch(/FFmpeg/);
    // The setting's value is the service's to log, not the registry's to show.
    expect(answer.body.status_reason).not.toContain("/nonexistent");
  });

  it("lists it among the unavailable tools only; the other families stay live", async () => {
    const unavailable = await t.http("GET", `${BASE}?status=unavailable`);
    const ids = unavailable.body.tools.map((tool: { id: string }) => tool.id);
    expect(ids).toContain("audio.process");
    expect(ids).not.toContain("img.process");
    expect(ids).not.toContain("docs.process");
    const live = await t.http("GET", `${BASE}?status=live&execution=job`);
    expect(live.body.tools.map((tool: { id: string }) => tool.id)).toEqual(["docs.process", "img.process"]);
  });

  it("refuses its run: 503 tools.tool.unavailable with the reason", async () => {
    const token = await t.token({ kind: "user", sub: "usr_listener" });
    const answer = await t.http("POST", `${BASE}/audio.process/run`, { token, body: { input: {} } });
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ code: "tools.tool.unavailable", tool: "audio.process" });
    expect(answer.body.detail).toMatch(/FFmpeg/);
  });
});
