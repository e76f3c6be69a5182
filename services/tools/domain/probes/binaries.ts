import { runProgram } from "../../families/program.js";

/** How long a program may take to say what it is. */
const VERSION_TIMEOUT_MS = 3_000;

/** The programs the binary probes run, and what their `-V` answer starts with (on stdout or stderr). */
const PROGRAMS = {
  "net.ping": { file: "ping", version: /^ping from iputils/ },
  "net.traceroute": { file: "traceroute", version: /^Modern traceroute for Linux/ },
} as const;

/** The program a binary probe runs. */
export function programOf(tool: keyof typeof PROGRAMS): string {
  return PROGRAMS[tool].file;
}

/**
 * Which binary probes can run here, by tool id: their program is on the PATH and is the one whose output they
 * read (iputils ping, Debian's traceroute), asked without a shell. The tools' live status comes from this.
 */
export async function probeBinaries(): Promise<Record<string, boolean>> {
  const missing = () => new Error("not installed");
  const answers = await Promise.all(
    Object.entries(PROGRAMS).map(async ([tool, { file, version }]): Promise<[string, boolean]> => {
      const signal = AbortSignal.timeout(VERSION_TIMEOUT_MS);
      const ran = await runProgram(file, ["-V"], { signal, missing }).catch(() => undefined);
      return [tool, ran?.code === 0 && version.test(`${ran.stdout}${ran.stderr}`.trim())];
    }),
  );
  return Object.fromEntries(answers);
}
