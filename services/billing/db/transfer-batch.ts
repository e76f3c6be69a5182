import { create } from "@bufbuild/protobuf";
import type { EntityManager } from "@mikro-orm/postgresql";
import { TransferResultSchema, type Transfer, type TransferResult } from "../../../gen/pf/billing/v1/ledger_pb.js";
import { answerKeys, claimKeys, releaseKeys, storedAnswer, type IdempotencyKey } from "../../kit/writes/idempotency.js";
import { commitEnded, currentCall, exceeded, expiredNow, outsideCall, type Call } from "../../kit/runtime/call.js";
import type { ServiceContext } from "../../kit/service/module.js";
import { transfersCreated } from "../events.js";
import { postBatch, type Posted, type Posting } from "./ledger.js";
import { currentTraceContext, inTraceContext, traced, type KeptTrace } from "../../kit/runtime/tracing.js";
import { sql } from "../../kit/db/sql.js";

/** One transfer as the handler hands it over: its key, its posting and how its answer reads once posted. */
export interface BatchedTransfer {
  key: IdempotencyKey;
  posting: Posting;
  transferOf(posted: Posted): Transfer;
}

interface Member extends BatchedTransfer {
  /** The call being served, whose deadline decides whether this transfer may commit. */
  call: Call | undefined;
  /** Its trace, which its event carries on (the batch itself runs outside every call and trace). */
  traceContext: KeptTrace;
  resolve(result: TransferResult): void;
  reject(error: unknown): void;
}

/** The whole batch failed (a lost connection, a timeout, deadlocks past their retries): post the transfer alone. */
export class BatchFailed extends Error {
  constructor(cause: unknown) {
    super("the transfer batch failed", { cause });
  }
}

/** A member's deadline passed while the batch ran: the batch rolls back and runs again without it. */
class LateMember extends Error {}

/** PostgreSQL's query_canceled: the batch's statement_timeout, its earliest deadline, ended a statement. */
const STATEMENT_TIMEOUT = "57014";

/**
 * Transfers of one billing instance posted together: one transaction, one
 * database call for all postings, one commit. Batching is natural: a transfer
 * that arrives while no batch is being posted starts one at once (no added
 * latency at low load); those arriving meanwhile queue and go together next.
 * Each member gets exactly its answer alone: applied, refused (its key given
 * back, nothing of it written, its neighbours unaffected), or the stored
 * answer of its key. Two requests with one key never share a batch: the
 * second waits for the next, and finds the first's answer there.
 */
export class TransferBatch {
  private readonly queue: Member[] = [];
  private busy = false;

  constructor(
    private readonly ctx: ServiceContext,
    private readonly most: number,
  ) {}

  /** The transfer's answer, or its refusal; `BatchFailed` when the batch as a whole failed. */
  post(transfer: BatchedTransfer): Promise<TransferResult> {
    return new Promise<TransferResult>((resolve, reject) => {
      this.queue.push({ ...transfer, call: currentCall(), traceContext: currentTraceContext(), resolve, reject });
      this.next();
    });
  }

  private next(): void {
    if (this.busy || this.queue.length === 0) return;
    this.busy = true;
    const batch = this.take();
    void outsideCall(() => this.run(batch)).finally(() => {
      this.busy = false;
      this.next();
    });
  }

  /** Up to `most` queued members in order, one per key; the others stay queued. */
  private take(): Member[] {
    const keys = new Set<string>();
    const taken: Member[] = [];
    for (let i = 0; i < this.queue.length && taken.length < this.most;) {
      const id = keyId(this.queue[i].key);
      if (keys.has(id)) {
        i++;
        continue;
      }
      keys.add(id);
      taken.push(...this.queue.splice(i, 1));
    }
    return taken;
  }

  private async run(batch: Member[]): Promise<void> {
    let members = batch;
    for (;;) {
      members = members.filter((member) => {
        if (!late(member)) return true;
        member.reject(exceeded());
        return false;
      });
      if (members.length === 0) return;
      let outcomes: (TransferResult | Error)[];
      try {
        outcomes = await this.ctx.transaction((em) => this.postAll(em, members));
      } catch (error) {
        commitsEnded(members, false);
        // A member's deadline ended the batch's statements: the others go on without it.
        const timedOut = (error as { code?: string }).code === STATEMENT_TIMEOUT && members.some(late);
        if (error instanceof LateMember || timedOut) continue;
        for (const member of members) member.reject(new BatchFailed(error));
        return;
      }
      commitsEnded(members, true);
      members.forEach((member, i) => {
        const outcome = outcomes[i];
        if (outcome instanceof Error) member.reject(outcome);
        else member.resolve(outcome);
      });
      return;
    }
  }

  /** Inside the batch's transaction: every member's key, posting, answer and event; its outcome, in order. */
  private async postAll(em: EntityManager, members: Member[]): Promise<(TransferResult | Error)[]> {
    // A retried attempt (deadlock, serialization) starts again from running calls.
    commitsEnded(members, false);
    await boundByDeadlines(em, members);
    const outcomes: (TransferResult | Error)[] = [];
    // Keys are claimed in one order everywhere, so two batches never wait on each other's keys in a cycle.
    const byKey = members.map((_, i) => i).sort((a, b) => compare(keyId(members[a].key), keyId(members[b].key)));
    const claimed = await claimKeys(
      em,
      byKey.map((i) => members[i].key),
    );
    for (const [n, i] of byKey.entries()) {
      if (claimed[n]) continue;
      // A key already answered: its stored answer (or 409 idempotency.mismatch), as a retry gets alone.
      const stored = await storedAnswer(em, members[i].key, TransferResultSchema).catch((error: Error) => error);
      if (!stored) throw new Error(`idempotency key ${members[i].key.key} neither claimed nor stored`);
      outcomes[i] = stored;
    }
    const posting = members.flatMap((_, i) => (outcomes[i] === undefined ? [i] : []));
    const posted = await postBatch(
      em,
      posting.map((i) => members[i].posting),
    );
    const answered: { key: IdempotencyKey; answer: TransferResult; member: Member }[] = [];
    const refused: IdempotencyKey[] = [];
    posting.forEach((i, n) => {
      const outcome = posted[n];
      if (outcome instanceof Error) {
        outcomes[i] = outcome;
        refused.push(members[i].key);
        return;
      }
      const answer = create(TransferResultSchema, { transfer: members[i].transferOf(outcome) });
      outcomes[i] = answer;
      answered.push({ key: members[i].key, answer, member: members[i] });
    });
    await answerKeys(em, TransferResultSchema, answered);
    await releaseKeys(em, refused);
    // The outbox stamps each event with the active trace: one statement for all, unless the transfers are traced.
    if (answered.every(({ member }) => !traced(member.traceContext)))
      await transfersCreated(
        em,
        answered.map(({ answer }) => answer.transfer!),
      );
    else
      for (const { answer, member } of answered)
        await inTraceContext(member.traceContext, () => transfersCreated(em, [answer.transfer!]));
    if (members.some(late)) throw new LateMember();
    // From here to the end of the commit no member's deadline fails it (the kit's commitWithin, for many calls).
    for (const { call } of members) if (call) call.state = "committing";
    return outcomes;
  }
}

/** No statement outlives the earliest deadline of the batch: a wait on a lock ends there, and the batch goes on without that member. */
async function boundByDeadlines(em: EntityManager, members: Member[]): Promise<void> {
  const deadlines = members.flatMap(({ call }) => (call ? [call.deadline] : []));
  if (deadlines.length === 0) return;
  const remaining = Math.max(1, Math.ceil(Math.min(...deadlines) - Date.now()));
  await sql(em, `set local statement_timeout = ${remaining}`);
}

/** The member's caller has stopped waiting, or its deadline passed before its commit began. */
function late({ call }: Member): boolean {
  return call !== undefined && expiredNow(call);
}

/** After the commit: the members' calls committed (theirs and their callers'), or are running again. */
function commitsEnded(members: Member[], committed: boolean): void {
  for (const { call } of members) if (call) commitEnded(call, committed);
}

function keyId(key: IdempotencyKey): string {
  return `${key.scope}\u0000${key.key}`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
