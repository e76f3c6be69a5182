import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

// A full collection before each sample, so the peak is memory still held, not garbage a later collection frees
// (RSS moved with the collector's timing: 71 MiB on one run, under 48 on others).
setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;
const held = () => {
  collect();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
};

/**
 * The most memory (JavaScript heap and buffers) the process held above where it started, while `work` runs. A full
 * collection of a worker that holds every test file's modules (vitest `isolate: false`) can take most of a second:
 * the next sample waits four times as long as the last collection took, so collecting never starves the upload.
 * Sampled on a timer: the peak while `work` runs is what is measured, nothing is waited for.
 */
export async function peakGrowth(work: () => Promise<unknown>): Promise<number> {
  const start = held();
  let peak = start;
  let timer: NodeJS.Timeout | undefined;
  const sample = () => {
    const began = Date.now();
    peak = Math.max(peak, held());
    timer = setTimeout(sample, Math.max(250, 4 * (Date.now() - began)));
  };
  timer = setTimeout(sample, 250);
  try {
    await work();
  } finally {
    clearTimeout(timer);
  }
  return Math.max(peak, held()) - start;
}
