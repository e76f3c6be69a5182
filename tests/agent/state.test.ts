import { chmod, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readState, writeState, type AgentState } from "../../agent/state.js";

const STATE: AgentState = {
  url: "http://127.0.0.1:1",
  device_id: "dev_1",
  robot_id: "rbt_1",
  credential: "secret-credential",
  publish_key: "secret-publish-key",
};

describe("the agent's state file", () => {
  let dir: string;
  beforeAll(async () => (dir = await mkdtemp(join(tmpdir(), "pf-agent-state-"))));
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("is written 0600 in a 0700 folder, and read back", async () => {
    const path = join(dir, "nested", "state.json");
    await writeState(path, STATE);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect((await stat(join(dir, "nested"))).mode & 0o777).toBe(0o700);
    expect(await readState(path)).toEqual(STATE);
  });

  it("is narrowed to 0600 when others could read it", async () => {
    const path = join(dir, "loose.json");
    await writeFile(path, JSON.stringify(STATE));
    await chmod(path, 0o644);
    expect(await readState(path)).toEqual(STATE);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it("is absent before the first pairing", async () => {
    expect(await readState(join(dir, "none.json"))).toBeUndefined();
  });
});
