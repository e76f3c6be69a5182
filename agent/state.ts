import { chmod, mkdir, open, readFile, rename, rm, stat } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";

/** What a paired agent keeps between starts. The file is the device's secret: mode 0600, never logged. */
export interface AgentState {
  /** The gateway it paired with. */
  url: string;
  device_id: string;
  robot_id: string;
  credential: string;
  publish_key: string;
  /** The robot's e-stop as last heard: latched stays latched across a restart until bot says cleared. */
  estop?: boolean;
  /** Set once bot closed the link for good (`revoked`, `rotated`, a refused credential): pair again. */
  closed?: string;
}

/** Where the state lives unless told: $XDG_STATE_HOME/pf-agent/state.json, else ~/.local/state/pf-agent/state.json. */
export function defaultStatePath(): string {
  const base = process.env.XDG_STATE_HOME || join(homedir(), ".local", "state");
  return join(base, "pf-agent", "state.json");
}

/** Reads the state, or undefined before the first pairing; a file others can read is narrowed to 0600 first. */
export async function readState(path: string): Promise<AgentState | undefined> {
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  if (mode & 0o077) await chmod(path, 0o600);
  return JSON.parse(await readFile(path, "utf8")) as AgentState;
}

/**
 * Writes the state whole or not at all: a file created 0600 beside it (so the secret is never readable by others,
 * not even for a moment), synced, then renamed over it. Its folder is made 0700 if missing.
 */
export async function writeState(path: string, state: AgentState): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  // A file left by a crash keeps its own mode: only a new one gets 0600.
  await rm(temporary, { force: true });
  const file = await open(temporary, "wx", 0o600);
  try {
    await file.writeFile(`${JSON.stringify(state, null, 2)}\n`);
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temporary, path);
}
