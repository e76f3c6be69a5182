import { create, type DescMessage, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { timestampNow } from "@bufbuild/protobuf/wkt";
import { ConnectError } from "@connectrpc/connect";
import { BotService } from "../../gen/pf/bot/v1/bot_pb.js";
import { ExitReason, NetPolicy, type JobExitSchema } from "../../gen/pf/bot/v1/jobs_pb.js";
import {
  LinkFrameSchema,
  OutputStream,
  type DeviceCapsSchema,
  type JobDispatch,
  type Welcome,
} from "../../gen/pf/bot/v1/link_pb.js";
import { BotLinkService } from "../../gen/pf/bot/v1/link_service_pb.js";
import type { TestPlatform } from "./platform.js";
import { until } from "./until.js";

/** What pairing answers: the device, its robot, and its secrets (shown once). */
export interface PairedDevice {
  deviceId: string;
  robotId: string;
  credential: string;
  publishKey: string;
}

/** Pairs a new device with a robot's one-time pairing code (BotLinkService.PairDevice, no token). */
export async function pairDevice(t: TestPlatform, code: string, name = "test device"): Promise<PairedDevice> {
  const answer = await t.client(BotLinkService).pairDevice({ code, name });
  return {
    deviceId: answer.deviceId,
    robotId: answer.robotId,
    credential: answer.credential,
    publishKey: answer.publishKey,
  };
}

/** A message whose `frame` oneof says what it is (LinkFrame, bot's ControlFrame). */
type Framed = { frame: { case: string | undefined; value?: unknown } };
type CaseOf<F extends Framed> = NonNullable<F["frame"]["case"]>;
type ValueOf<F extends Framed, C> = Extract<F["frame"], { case: C }>["value"];

/**
 * The test's side of a bidi stream: what it sends goes to the call in order, every message the service sends is kept
 * in order (`frames`), and `next(kind)` waits for the next one of a kind not taken yet (others stay for their own
 * `next`). `ended` settles when the service ends the stream: undefined for a plain end, its ConnectError otherwise.
 */
export class StreamPeer<Desc extends DescMessage, F extends MessageShape<Desc> & Framed = MessageShape<Desc> & Framed> {
  /** Every message the service sent, in order. */
  readonly frames: F[] = [];
  /** Settles when the service ends the stream: undefined for a plain end, the ConnectError it failed with otherwise. */
  readonly ended: Promise<ConnectError | undefined>;
  private readonly outgoing: F[] = [];
  private wakeOutgoing?: () => void;
  private closed = false;
  private taken = 0;
  private endedWith?: { error: ConnectError | undefined };

  constructor(
    private readonly schema: Desc,
    open: (requests: AsyncIterable<F>) => AsyncIterable<F>,
  ) {
    const responses = open(this.requests());
    this.ended = (async () => {
      try {
        for await (const frame of responses) this.frames.push(frame);
        return undefined;
      } catch (error) {
        return ConnectError.from(error);
      } finally {
        this.close();
      }
    })();
    void this.ended.then((error) => (this.endedWith = { error }));
  }

  /** Sends a message whose `frame` is this (none: a message of `rest`'s fields only, such as a robot named). */
  send(
    frame: (MessageInitShape<Desc> extends infer I ? (I extends { frame?: infer O } ? O : never) : never) | undefined,
    rest: Record<string, unknown> = {},
  ) {
    if (this.closed) throw new Error("the stream is closed");
    const init = { ...rest, ...(frame === undefined ? {} : { frame }) };
    this.outgoing.push(create(this.schema, init as unknown as MessageInitShape<Desc>) as F);
    this.wakeOutgoing?.();
  }

  /** Waits for the next message of this kind the service sends. */
  async next<C extends CaseOf<F>>(kind: C, timeoutMs = 10_000): Promise<ValueOf<F, C>> {
    let found: F | undefined;
    await until(() => {
      found = this.take(kind);
      return found !== undefined || this.endedWith !== undefined;
    }, timeoutMs);
    if (!found) throw new Error(`the stream ended before a ${kind} message`, { cause: this.endedWith?.error });
    return found.frame.value as ValueOf<F, C>;
  }

  /** Ends the test's side of the stream (the service ends its side in turn). */
  close(): void {
    this.closed = true;
    this.wakeOutgoing?.();
  }

  /** The first message of this kind not taken yet, taken (moved before the ones left). */
  private take(kind: string): F | undefined {
    const at = this.frames.findIndex((frame, i) => i >= this.taken && frame.frame.case === kind);
    if (at < 0) return undefined;
    const [frame] = this.frames.splice(at, 1);
    this.frames.splice(this.taken++, 0, frame);
    return frame;
  }

  private async *requests(): AsyncIterable<F> {
    for (;;) {
      const frame = this.outgoing.shift();
      if (frame) {
        yield frame;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.wakeOutgoing = resolve));
      this.wakeOutgoing = undefined;
    }
  }
}

/** What a test device says in its hello (DEFAULT_HELLO where left out). */
export interface HelloOptions {
  /** Suffixed `#<n>` as said, so each hello's being recorded can be seen. */
  agentVersion?: string;
  classes?: string[];
  artifacts?: { name: string; class: string; sha256: string }[];
  caps?: MessageInitShape<typeof DeviceCapsSchema>;
  runningJobIds?: string[];
}

/** The agent version a test device says it runs (suffixed `#<n>`). */
const AGENT_VERSION = "test-device/1";

/** The hello a test device sends unless told otherwise: classes `function` and `code`, net none, 4 slots. */
export const DEFAULT_HELLO: HelloOptions = {
  agentVersion: AGENT_VERSION,
  classes: ["function", "code"],
  artifacts: [{ name: "echo", class: "function", sha256: "0".repeat(64) }],
  caps: { maxTtlMs: 0n, net: [NetPolicy.NONE], slots: 4 },
};

/** Hellos said so far: each says an agent version of its own, so its being recorded can be seen. */
let hellos = 0;

/**
 * A scripted device on bot's link (BotLinkService.Link over the typed client's bidi stream, so the real handlers
 * run, no agent needed): `connect` opens the link with the device's credential, waits for `welcome` and says
 * `hello`; the test then sends the device's frames (`ack`, `started`, `output`, `exit`, or any with `send`) and waits
 * for bot's (`next("job")`, `next("jobCancel")`, `next("estop")`, `next("close")`…). `frames` holds all bot sent, in
 * order; `ended` settles when bot ends the link (a ConnectError for a refusal, undefined for a plain end).
 */
export class TestDevice extends StreamPeer<typeof LinkFrameSchema> {
  private constructor(t: TestPlatform, credential: string) {
    super(LinkFrameSchema, (requests) =>
      t.client(BotLinkService).link(requests, { headers: { "x-pf-device-credential": credential } }),
    );
  }

  /**
   * Opens the link and waits for `welcome`; then says hello (`DEFAULT_HELLO` merged with `hello`), unless `hello`
   * is null, and waits until bot has recorded it (the robot's device list shows the agent version), so a dispatch
   * right after finds the classes advertised. Rejects with bot's ConnectError when the link is refused (a bad
   * credential is 401).
   */
  static async connect(t: TestPlatform, credential: string, hello: HelloOptions | null = {}): Promise<TestDevice> {
    const device = new TestDevice(t, credential);
    const welcome = await device.next("welcome").catch(() => undefined);
    if (!welcome) throw (await device.ended) ?? new Error("the link ended before welcome");
    if (hello === null) return device;
    const agentVersion = `${hello.agentVersion ?? AGENT_VERSION}#${++hellos}`;
    device.send({ case: "hello", value: { ...DEFAULT_HELLO, ...hello, agentVersion } });
    const reader = t.client(BotService, await t.token({ kind: "service", svc: "tests", caps: ["bot.robot.read"] }));
    await until(async () => {
      const { result } = await reader.listRobotDevices({ id: welcome.robotId, limit: 200 });
      const devices = result.case === "devices" ? result.value.devices : [];
      return devices.some((each) => each.id === welcome.deviceId && each.agentVersion === agentVersion);
    });
    return device;
  }

  /** The welcome bot sent first. */
  get welcome(): Welcome {
    const frame = this.frames[0]?.frame;
    if (frame?.case !== "welcome") throw new Error("no welcome yet");
    return frame.value;
  }

  /** Acknowledges a job at once (ttl counts from here). */
  ack(jobId: string): void {
    this.send({ case: "ack", value: { jobId, receivedAt: timestampNow() } });
  }

  /** Reports the job's process started. */
  started(jobId: string): void {
    this.send({ case: "started", value: { jobId, startedAt: timestampNow() } });
  }

  /** Reports a chunk of output (seq from 1 per job). */
  output(jobId: string, seq: number, text: string, stream = OutputStream.STDOUT): void {
    this.send({ case: "output", value: { jobId, seq: BigInt(seq), text, stream } });
  }

  /** Reports the job's end (completed with code 0 unless told otherwise). */
  exit(jobId: string, exit: MessageInitShape<typeof JobExitSchema> = {}): void {
    this.send({
      case: "exit",
      value: { jobId, exit: { reason: ExitReason.COMPLETED, ...exit }, endedAt: timestampNow() },
    });
  }

  /** Runs the next job bot sends: ack, started, its stdout chunks, exit 0; answers the job frame. */
  async runNext(stdout: string[] = []): Promise<JobDispatch> {
    const job = await this.next("job");
    this.ack(job.jobId);
    this.started(job.jobId);
    stdout.forEach((text, i) => this.output(job.jobId, i + 1, text));
    this.exit(job.jobId);
    return job;
  }
}
