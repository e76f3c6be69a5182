import { clone, fromBinary, type Message, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { EntityManager } from "@mikro-orm/postgresql";
import { createHash } from "node:crypto";
import { sql } from "../db/sql.js";
import { invalid, problem } from "../handler/problem.js";
import { maxLength } from "../handler/text.js";

/**
 * A request's idempotency key: the body's `idempotency_key`, else the
 * Idempotency-Key header; up to 255 characters, as Stripe takes them; "" when none.
 */
export function idempotencyKeyOf(bodyKey: string, call: HandlerContext): string {
  return maxLength("idempotency_key", bodyKey || call.requestHeader.get("idempotency-key") || "", 255);
}

/** What makes two requests "the same" for one idempotency key. */
export function requestHash<Desc extends DescMessage>(schema: Desc, request: MessageShape<Desc>): string {
  return createHash("sha256").update(toBinary(schema, request)).digest("base64url");
}

/**
 * Stripe-like idempotency, inside the caller's transaction: the first request
 * with a key runs `work` and stores its answer with the key; a retry gets that
 * answer; the same key with another request is refused (409
 * idempotency.mismatch); a concurrent duplicate waits on the key's row lock and
 * then gets the first answer. A failed `work` rolls the key back with it.
 */
export async function idempotent<Desc extends DescMessage>(
  em: EntityManager,
  key: { scope: string; key: string; hash: string },
  response: Desc,
  work: () => Promise<MessageShape<Desc>>,
): Promise<MessageShape<Desc>> {
  const claimed = await sql(
    em,
    `insert into {idempotency_keys} (scope, key, request_hash, response) values (?, ?, ?, ''::bytea)
     on conflict do nothing returning key`,
    [key.scope, key.key, key.hash],
  );
  if (claimed.length === 0) return (await storedAnswer(em, key, response))!;
  const answer = await work();
  await sql(em, `update {idempotency_keys} set response = ? where scope = ? and key = ?`, [
    Buffer.from(toBinary(response, answer)),
    key.scope,
    key.key,
  ]);
  return answer;
}

/**
 * The answer stored for a key, read without claiming it (undefined when the
 * key is new): a flow that calls another service before its own transaction
 * answers a retry from here without calling again. Another request under the
 * key is 409 idempotency.mismatch.
 */
export async function storedAnswer<Desc extends DescMessage>(
  em: EntityManager,
  key: { scope: string; key: string; hash: string },
  response: Desc,
): Promise<MessageShape<Desc> | undefined> {
  const [first] = await sql<{ request_hash: string; response: Buffer }>(
    em,
    `select request_hash, response from {idempotency_keys} where scope = ? and key = ?`,
    [key.scope, key.key],
  );
  if (!first) return undefined;
  if (first.request_hash !== key.hash)
    throw problem(409, "idempotency.mismatch", "This idempotency key was used with a different request.");
  return fromBinary(response, first.response);
}

/** One call's idempotency, read from its method: the key, and how to answer under it. */
export interface Idempotency {
  /** The key ("" when the call sent none and none is required). */
  readonly key: string;
  /** Runs `work` once per key inside the caller's transaction (`idempotent`); without a key, simply runs it. */
  run<T extends Message>(em: EntityManager, work: () => Promise<T>): Promise<T>;
  /** The answer stored under the key, read without claiming it (`storedAnswer`); undefined without a key. */
  stored<T extends Message>(em: EntityManager): Promise<T | undefined>;
  /** The key with its scope and request hash, for a batch of writes (`claimKeys`); call it only with a key. */
  identity(): IdempotencyKey;
}

/**
 * The idempotency of a unary call, with the schemas taken from its method: the
 * key is the body's `idempotency_key` or the Idempotency-Key header; the
 * request is hashed with the key left out (plus `hashWith`, what else makes
 * two requests the same, such as the calling app); answers are stored as the
 * method's output. `scope` keeps callers' keys apart (`transfer:svc:tips`).
 * `required` refuses a call without a key (400 naming `idempotency_key`, or
 * the Idempotency-Key header where the contract has no such field).
 */
export function idempotencyOf(
  call: HandlerContext,
  request: Message,
  options: { scope: string; required?: boolean; hashWith?: string },
): Idempotency {
  const input = call.method.input;
  const output = call.method.output;
  const bodyKey =
    "idempotencyKey" in request && typeof request.idempotencyKey === "string" ? request.idempotencyKey : "";
  const key = idempotencyKeyOf(bodyKey, call);
  if (options.required && key === "") {
    // A contract without an idempotency_key field takes the key as a header only: the refusal names that.
    const field = input.fields.some((each) => each.localName === "idempotencyKey")
      ? "idempotency_key"
      : "Idempotency-Key";
    throw invalid(field, `This write needs an ${field}, so a retry never applies it twice.`);
  }
  let hash: string | undefined;
  const identity = () => {
    if (hash === undefined) {
      const keyless = clone(input, request as MessageShape<typeof input>) as Message & { idempotencyKey?: string };
      if (bodyKey !== "") keyless.idempotencyKey = "";
      hash =
        (options.hashWith === undefined ? "" : `${options.hashWith}:`) +
        requestHash(input, keyless as MessageShape<typeof input>);
    }
    return { scope: options.scope, key, hash };
  };
  return {
    key,
    run: (em, work) =>
      (key === ""
        ? work()
        : idempotent(em, identity(), output, work as () => Promise<MessageShape<typeof output>>)) as Promise<never>,
    stored: async (em) => (key === "" ? undefined : ((await storedAnswer(em, identity(), output)) as never)),
    identity,
  };
}

/** One idempotency key as stored: its scope, the key and the hash of the request it was sent with. */
export interface IdempotencyKey {
  scope: string;
  key: string;
  hash: string;
}

/**
 * A batch of keyed writes in one transaction (billing's ledger batch): claims
 * every key with one statement, in the order given (callers sort them, so two
 * batches never wait on each other's keys in a cycle), and answers true for
 * each key claimed, false for one already stored (answer that request with
 * `storedAnswer`). Each claimed key is then answered (`answerKeys`) or, when
 * its own write was refused, given back (`releaseKeys`) before the commit, as
 * `idempotent` would by rolling it back.
 */
export async function claimKeys(em: EntityManager, keys: IdempotencyKey[]): Promise<boolean[]> {
  const claimed = await sql<{ scope: string; key: string }>(
    em,
    `insert into {idempotency_keys} (scope, key, request_hash, response)
     select k.scope, k.key, k.hash, ''::bytea
       from jsonb_array_elements(?::jsonb) with ordinality as e (value, n),
         jsonb_to_record(e.value) as k (scope text, key text, hash text)
       order by e.n
     on conflict do nothing returning scope, key`,
    [JSON.stringify(keys)],
  );
  const mine = new Set(claimed.map((row) => `${row.scope}\u0000${row.key}`));
  return keys.map((k) => mine.has(`${k.scope}\u0000${k.key}`));
}

/** Stores the answers of keys claimed by `claimKeys`, with one statement. */
export async function answerKeys<Desc extends DescMessage>(
  em: EntityManager,
  response: Desc,
  answers: { key: IdempotencyKey; answer: MessageShape<Desc> }[],
): Promise<void> {
  if (answers.length === 0) return;
  const rows = answers.map(({ key, answer }) => ({
    scope: key.scope,
    key: key.key,
    response: Buffer.from(toBinary(response, answer)).toString("base64"),
  }));
  await sql(
    em,
    `update {idempotency_keys} t set response = decode(a.response, 'base64')
       from jsonb_to_recordset(?::jsonb) as a (scope text, key text, response text)
       where t.scope = a.scope and t.key = a.key`,
    [JSON.stringify(rows)],
  );
}

/** Gives back keys claimed by `claimKeys` whose write was refused: a retry runs again, as after a rollback. */
export async function releaseKeys(em: EntityManager, keys: IdempotencyKey[]): Promise<void> {
  if (keys.length === 0) return;
  await sql(
    em,
    `delete from {idempotency_keys} t
     using jsonb_to_recordset(?::jsonb) as a (scope text, key text)
     where t.scope = a.scope and t.key = a.key`,
    [JSON.stringify(keys.map(({ scope, key }) => ({ scope, key })))],
  );
}
