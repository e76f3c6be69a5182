import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { EntityManager } from "@mikro-orm/postgresql";
import { OutputOrderSchema, type OutputOrder } from "../../gen/pf/restream/v1/worker_pb.js";
import { newId } from "../kit/handler/ids.js";
import { OutboundError, resolveTarget } from "../kit/outbound/fetch.js";
import type { RestreamContext } from "./context.js";
import { autoStartDestinations, destinationOfOutput } from "./db/destinations.js";
import type { DestinationRow, OutputRow, SessionRow } from "./db/entities.js";
import { appendLogLines } from "./db/logs.js";
import { findOutput, insertOutput, runningOutputsOf, saveOutputs } from "./db/outputs.js";
import { checkDestinationUrl, formatOf, pushUrl, schemeOf } from "./domain/destination-url.js";
import { isRunning, type OutputState } from "./domain/output-states.js";
import { recordOutputEvent } from "./events.js";
import { redactLine } from "./domain/redact.js";

/** A destination's host as judged now: the address to connect to, or why not (`refused_address`, `dns`, `timeout`). */
export type Judgement =
  | { ok: true; address: string; port: number }
  | { ok: false; failure: "refused_address" | "dns" | "timeout"; detail: string };

/**
 * Resolves a destination URL's host and judges every address it answers (the kit's SSRF rules, PF_FETCH_ALLOW_HOSTS
 * lifting them for a listed host:port), within PF_RESTREAM_TEST_TIMEOUT_MS. The URL rules are checked again too: a
 * stored URL stays what its write checked, but the allowed hosts may have changed since.
 */
export async function judgeDestination(ctx: RestreamContext, url: string): Promise<Judgement> {
  let target: ReturnType<typeof checkDestinationUrl>;
  try {
    target = checkDestinationUrl(url, ctx.outbound.allowHosts);
  } catch (error) {
    return { ok: false, failure: "refused_address", detail: (error as Error).message };
  }
  const signal = AbortSignal.timeout(ctx.settings.testTimeoutMs);
  try {
    const { addresses, refused } = await resolveTarget(target.host, target.port, ctx.outbound, signal);
    if (refused !== undefined)
      return { ok: false, failure: "refused_address", detail: `${target.host} is a ${refused} address` };
    return { ok: true, address: addresses[0], port: target.port };
  } catch (error) {
    if (error instanceof OutboundError && error.failure === "dns")
      return { ok: false, failure: "dns", detail: error.message };
    if (signal.aborted) return { ok: false, failure: "timeout", detail: `${target.host} did not resolve in time` };
    throw error;
  }
}

/** Moves an output to `state` (with its reason; ended when it is stopped or failed) and records its event. */
export async function changeOutputState(
  em: EntityManager,
  output: OutputRow,
  owner: string,
  change: { state: OutputState; reason: string; at: Date },
): Promise<void> {
  output.state = change.state;
  output.reason = change.reason;
  if (!isRunning(change.state)) output.endedAt = change.at;
  await saveOutputs(em);
  await announceOutput(em, output, owner, change.at);
}

/** Records restream.output.state_changed for the output's state as it now stands. */
export async function announceOutput(em: EntityManager, output: OutputRow, owner: string, at: Date): Promise<void> {
  await recordOutputEvent(em, {
    outputId: output.id,
    destinationId: output.destinationId,
    sessionId: output.sessionId,
    streamId: output.streamId,
    owner,
    state: output.state,
    reason: output.reason,
    at: timestampFromDate(at),
  });
}

/**
 * Judges, before any transaction, the destinations a session of this stream would start on its own: each host
 * resolved and judged public (DNS is never waited on while a lock is held). Keyed by destination and URL, so one
 * changed meanwhile is not taken as judged.
 */
export async function judgeAutoOutputs(ctx: RestreamContext, streamId: string): Promise<Map<string, Judgement>> {
  const destinations = await autoStartDestinations(ctx.orm.em.fork(), streamId);
  const judgements = await Promise.all(destinations.map((destination) => judgeDestination(ctx, destination.url)));
  return new Map(destinations.map((destination, index) => [judgedKey(destination), judgements[index]]));
}

/**
 * Opens outputs for a session that just started, in the authorisation's transaction: one `starting` output per
 * enabled destination of its stream (when auto_start_outputs is on) that `judgeAutoOutputs` found public, a `failed`
 * one (destination_refused, with a log line why) for each it refused. One added or changed since it judged is left
 * for its owner to start. Answers the orders the worker is to push.
 */
export async function openAutoOutputs(
  ctx: RestreamContext,
  em: EntityManager,
  session: SessionRow,
  judged: ReadonlyMap<string, Judgement>,
): Promise<OutputOrder[]> {
  const destinations = (await autoStartDestinations(em, session.streamId)).filter((destination) =>
    judged.has(judgedKey(destination)),
  );
  const judgements = destinations.map((destination) => judged.get(judgedKey(destination))!);
  const at = ctx.clock.now();
  const orders: OutputOrder[] = [];
  for (const [index, destination] of destinations.entries()) {
    const judgement = judgements[index];
    const output = await insertOutput(em, {
      id: newId("rso"),
      destinationId: destination.id,
      sessionId: session.id,
      streamId: session.streamId,
      state: judgement.ok ? "starting" : "failed",
      reason: judgement.ok ? "" : "destination_refused",
      workerId: session.workerId,
      generation: session.generation,
      startedAt: at,
      endedAt: judgement.ok ? null : at,
    });
    await announceOutput(em, output, session.owner, at);
    if (judgement.ok) orders.push(orderOf(ctx, destination, output.id));
    else {
      const line = `destination refused (${judgement.failure}): ${judgement.detail}`;
      await appendLogLines(em, output, [redactLine(line, [])], at, ctx.settings.logLines);
    }
  }
  return orders;
}

/** The order for an output a start_output command names, its URL and key unsealed now (never stored in a command). */
export async function orderFor(
  ctx: RestreamContext,
  em: EntityManager,
  outputId: string,
): Promise<OutputOrder | undefined> {
  const output = await findOutput(em, outputId);
  if (!output || !isRunning(output.state)) return undefined;
  const destination = await destinationOfOutput(em, output.destinationId);
  return destination ? orderOf(ctx, destination, output.id) : undefined;
}

/**
 * Ends a session's running outputs (`stopped`, reason `session_ended`) when the session ends or is interrupted, in
 * the transaction that ends it, with their events.
 */
export async function endOutputsOf(
  ctx: RestreamContext,
  em: EntityManager,
  session: SessionRow,
  at: Date,
): Promise<void> {
  for (const output of await runningOutputsOf(em, { sessionId: session.id }))
    await changeOutputState(em, output, session.owner, { state: "stopped", reason: "session_ended", at });
}

/** The secrets of a destination, unsealed: its stream key and srt passphrase ("" when unset). */
export function secretsOf(ctx: RestreamContext, destination: DestinationRow): { key: string; passphrase: string } {
  const unseal = (sealed: string) => (sealed === "" ? "" : ctx.sealer.open(sealed));
  return { key: unseal(destination.streamKeySealed), passphrase: unseal(destination.passphraseSealed) };
}

function orderOf(ctx: RestreamContext, destination: DestinationRow, outputId: string): OutputOrder {
  const { key, passphrase } = secretsOf(ctx, destination);
  const scheme = schemeOf(destination.url);
  return create(OutputOrderSchema, {
    outputId,
    url: pushUrl(destination.url, scheme, key, passphrase),
    format: formatOf(scheme),
    secrets: [key, passphrase].filter((secret) => secret !== ""),
  });
}

function judgedKey(destination: DestinationRow): string {
  return `${destination.id} ${destination.url}`;
}
