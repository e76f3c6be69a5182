import { readdirSync, readFileSync } from "node:fs";

/** Linux reports CPU time in /proc in USER_HZ ticks, 100 a second on every common architecture. */
const TICK_MS = 10;

/** What a process and its descendants use now. */
export interface TreeUsage {
  /** CPU time, user and system, its own and its reaped children's, in ms. */
  cpuMs: number;
  /** Resident memory in bytes. */
  rssBytes: number;
}

/** Sums a process tree's usage from /proc (a process gone in between counts as nothing). */
export function sampleTree(root: number): TreeUsage {
  const usage = { cpuMs: 0, rssBytes: 0 };
  for (const pid of treeOf(root)) {
    try {
      // Fields after the command's closing parenthesis: 14-17 are utime, stime, cutime, cstime.
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      usage.cpuMs += fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) * TICK_MS;
      const rss = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      usage.rssBytes += rss ? Number(rss[1]) * 1024 : 0;
    } catch {
      // Exited while being read.
    }
  }
  return usage;
}

/**
 * SIGKILLs a process tree, descendants before their parents: a parent killed first would orphan its children out of
 * the tree's reach (bubblewrap's namespace init, for one, may not yet have armed its death-with-parent signal).
 */
export function killTree(root: number): void {
  for (const pid of treeOf(root).reverse()) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}

/** A process and its descendants as /proc lists them now, parents before children. */
function treeOf(root: number): number[] {
  const tree: number[] = [];
  const pending = [root];
  for (let pid = pending.shift(); pid !== undefined; pid = pending.shift()) {
    tree.push(pid);
    try {
      for (const task of readdirSync(`/proc/${pid}/task`)) {
        const children = readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").trim();
        if (children) pending.push(...children.split(" ").map(Number));
      }
    } catch {
      // Exited while being read.
    }
  }
  return tree;
}
