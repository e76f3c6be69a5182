import { createHash } from "node:crypto";
import { until } from "../../../support/until.js";
import type {
  ControlPlane,
  IngestGrant,
  OutputOrder,
  OutputProgress,
  OutputState,
  WorkerCommand,
} from "../../../../services/restream/media/control-plane.js";

type Call<K extends keyof ControlPlane> = Parameters<ControlPlane[K]>[0];
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * The control plane's stand-in (the other side of the interface; the real one is restream's worker API): it records
 * every call, grants the keys it was given (by their hash, as the real one stores them), answers heartbeats with
 * `fenced` once told to, and feeds commands to the worker's watch.
 */
export class FakeControlPlane implements ControlPlane {
  readonly registrations: Call<"register">[] = [];
  readonly heartbeats: Call<"heartbeat">[] = [];
  readonly authorizations: Call<"authorizeIngest">[] = [];
  readonly sessionReports: Call<"reportSession">[] = [];
  readonly outputReports: Call<"reportOutput">[] = [];
  readonly logs: Call<"appendLogs">[] = [];
  /** Every command watch the worker opened, with the seq it acknowledged. */
  readonly watches: Call<"commands">[] = [];
  /** Every state report in the order it arrived: `session <id> <state>`, `output <id> <state>`. */
  readonly sequence: string[] = [];
  /** Answer heartbeats with fenced. */
  fence = false;
  /** State reports (session, output) to fail before answering again, as a control plane out of reach would. */
  failReports = 0;
  /** The state reports failed so far. */
  failedReports = 0;
  private readonly grants = new Map<string, { sessionId: string; outputs: OutputOrder[] }>();
  /** Every command sent, in seq order: a watch gets those after its afterSeq. */
  private readonly sent: WorkerCommand[] = [];
  private wake: (() => void) | undefined;
  private cutWatch: (() => void) | undefined;
  private generation = 0;

  /** Grants publishes with `key` (known by its hash only) as session `sessionId`, with these outputs. */
  allow(key: string, sessionId: string, outputs: OutputOrder[] = []): void {
    this.grants.set(sha256(key), { sessionId, outputs });
  }

  /** Sends the worker a command (its seq the next one); answers the seq. */
  send(command: DistributiveOmit<WorkerCommand, "seq">): number {
    const seq = this.sent.length + 1;
    this.sent.push({ ...command, seq } as WorkerCommand);
    this.wake?.();
    return seq;
  }

  /** Ends the worker's open command watch, as a cut connection or a deadline would. */
  cut(): void {
    this.cutWatch?.();
  }

  /** The session's reports' states, in order. */
  sessionStates(sessionId: string): string[] {
    return this.sessionReports.filter((report) => report.sessionId === sessionId).map((report) => report.state);
  }

  /** The output's reports' states, in order. */
  outputStates(outputId: string): OutputState[] {
    return this.outputReports.filter((report) => report.outputId === outputId).map((report) => report.state);
  }

  /** Waits until the output has reported `state`; a timeout names the states it did report and the last log lines. */
  untilOutput(outputId: string, state: OutputState): Promise<void> {
    return until(
      () => this.outputStates(outputId).includes(state),
      undefined,
      () =>
        `${outputId} reported [${this.outputStates(outputId).join(", ")}]; last lines: ${this.allLines().slice(-20).join(" | ")}`,
    );
  }

  /** The output's progress reports. */
  progressOf(outputId: string): OutputProgress[] {
    return this.outputReports.flatMap((report) =>
      report.outputId === outputId && report.progress ? [report.progress] : [],
    );
  }

  /** Every log line appended, of every output and session. */
  allLines(): string[] {
    return this.logs.flatMap((call) => call.lines);
  }

  async register(input: Call<"register">): Promise<{ generation: number }> {
    this.registrations.push(input);
    this.generation += 1;
    return { generation: this.generation };
  }

  async heartbeat(input: Call<"heartbeat">): Promise<{ fenced: boolean }> {
    this.heartbeats.push(input);
    return { fenced: this.fence };
  }

  async authorizeIngest(input: Call<"authorizeIngest">): Promise<IngestGrant> {
    this.authorizations.push(input);
    const grant = this.grants.get(input.keyHash);
    return grant ? { granted: true, streamId: "str_test", ...grant } : { granted: false, reason: "unknown key" };
  }

  async reportSession(input: Call<"reportSession">): Promise<void> {
    this.unreachable();
    this.sessionReports.push(input);
    this.sequence.push(`session ${input.sessionId} ${input.state}`);
  }

  async reportOutput(input: Call<"reportOutput">): Promise<void> {
    this.unreachable();
    this.outputReports.push(input);
    this.sequence.push(`output ${input.outputId} ${input.state}`);
  }

  private unreachable(): void {
    if (this.failReports === 0) return;
    this.failReports -= 1;
    this.failedReports += 1;
    throw new Error("control plane unavailable");
  }

  async appendLogs(input: Call<"appendLogs">): Promise<void> {
    this.logs.push(input);
  }

  async *commands(input: Call<"commands">, signal: AbortSignal): AsyncIterable<WorkerCommand> {
    this.watches.push(input);
    let cut = false;
    this.cutWatch = () => {
      cut = true;
      this.wake?.();
    };
    let after = input.afterSeq;
    while (!signal.aborted && !cut) {
      const next = this.sent.find((command) => command.seq > after);
      if (next) {
        after = next.seq;
        yield next;
        continue;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        signal.addEventListener("abort", () => resolve(), { once: true });
      });
    }
  }
}

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}
