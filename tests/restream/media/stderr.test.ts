import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OutputState } from "../../../services/restream/media/control-plane.js";
import type { Publish } from "../../../services/restream/media/ingest.js";
import { MAX_PENDING_CHARS, Output } from "../../../services/restream/media/outputs.js";
import { until } from "../../support/until.js";

const SECRET = "stream-key-0123456789";

describe("an output's FFmpeg stderr", () => {
  let dir: string;
  let ffmpeg: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "pf-stderr-"));
    ffmpeg = join(dir, "ffmpeg");
    // A stand-in FFmpeg: a line far past the bound, a secret in it, written in two parts, then a short last error.
    const first = `${"x".repeat(MAX_PENDING_CHARS)}${SECRET}`;
    const rest = "y".repeat(MAX_PENDING_CHARS);
    await writeFile(
      ffmpeg,
      `#!/bin/sh\nprintf '%s' '${first}' >&2\nsleep 0.3\nprintf '%s\\nlast error\\n' '${rest}' >&2\nexit 1\n`,
    );
    await chmod(ffmpeg, 0o755);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("drops a partial line past MAX_PENDING_CHARS whole, keeping the lines after it", async () => {
    const lines: string[] = [];
    const states: OutputState[] = [];
    const publish = {
      key: "ingest-key-0123456789",
      read: () => () => undefined,
    } as unknown as Publish;
    const output = new Output({
      order: { outputId: "out_stderr", url: "rtmp://dest.example/app", format: "flv", secrets: [SECRET] },
      publish,
      ffmpegPath: ffmpeg,
      backoff: { initialMs: 10, maxMs: 10, maxFailures: 1 },
      progressEveryMs: 1_000,
      reports: { state: (state) => states.push(state), logs: (more) => lines.push(...more) },
    });
    output.start();
    await until(() => states.includes("failed"));
    expect(lines).toContain(`FFmpeg wrote a line longer than ${MAX_PENDING_CHARS} characters: dropped`);
    expect(lines).toContain("last error");
    for (const line of lines) {
      expect(line).not.toContain("yyyy");
      expect(line).not.toContain(SECRET.slice(-8));
    }
  });
});
