/** Receives a running job's output as it comes: fd 1 is stdout, 2 stderr. */
export type OutputSink = (fd: 1 | 2, bytes: Uint8Array) => void;

/** How a sandboxed run ended. */
export interface Ended {
  /** The exit code, when it exited. */
  code?: number;
  /** The signal that ended it (a terminated worker reads as SIGKILL). */
  signal?: string;
  /** A limit the sandbox enforced itself (`cpu_ms`, `memory_bytes`). */
  limit?: string;
  /** A trap or a failure to run, in plain words. */
  error?: string;
}

/** A job running in a sandbox. */
export interface Running {
  /** Settles once the run is over and its output delivered to the sink. */
  done: Promise<Ended>;
  /** Kills it at once (idempotent). */
  kill(): void;
}
