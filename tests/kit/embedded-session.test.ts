import { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionQueue } from "../../services/kit/db/embedded-session.js";

/** Frontend protocol messages, by hand: a type byte, a length, the body. */
const cstring = (text: string) => Buffer.from(`${text}\0`);
const int16 = (n: number) => Buffer.from([n >> 8, n & 255]);
const int32 = (n: number) => {
  const buffer = Buffer.alloc(4);
  buffer.writeInt32BE(n);
  return buffer;
};
const message = (type: string, ...body: Buffer[]) => {
  const content = Buffer.concat(body);
  return new Uint8Array(Buffer.concat([Buffer.from(type), int32(content.length + 4), content]));
};
const parse = (sql: string) => message("P", cstring(""), cstring(sql), int16(0));
const bind = (...values: string[]) =>
  message(
    "B",
    cstring(""),
    cstring(""),
    int16(0),
    int16(values.length),
    ...values.flatMap((value) => [int32(Buffer.byteLength(value)), Buffer.from(value)]),
    int16(0),
  );
const execute = () => message("E", cstring(""), int32(0));
const sync = () => message("S");
const query = (sql: string) => message("Q", cstring(sql));

/** The backend messages of a connection's answers: their types, and the text of each row's first column. */
function readAnswers(bytes: Buffer): { types: string[]; rows: string[] } {
  const types: string[] = [];
  const rows: string[] = [];
  for (let at = 0; at < bytes.length; at += 1 + bytes.readInt32BE(at + 1)) {
    const type = String.fromCharCode(bytes[at]);
    types.push(type);
    if (type === "D") rows.push(bytes.subarray(at + 11, at + 11 + bytes.readInt32BE(at + 7)).toString());
  }
  return { types, rows };
}

let db: PGlite;
beforeAll(async () => {
  db = await PGlite.create();
}, 60_000);
afterAll(() => db?.close());

describe("the embedded database's one session, shared by its socket connections", () => {
  it("keeps an extended-protocol query whole: another connection's queries wait for its Sync", async () => {
    const queue = new SessionQueue(db);
    const answers = new Map<number, Buffer[]>([
      [1, []],
      [2, []],
    ]);
    const send = (handler: number, sent: Uint8Array) =>
      queue.enqueue(handler, sent, (data) => answers.get(handler)!.push(Buffer.from(data)));
    // Connection 1's Parse, then connection 2's messages (a simple query, then a query of two parameters), then the
    // rest of connection 1's query, in that order: the order the socket server would see them in.
    const sent = [
      send(1, parse("select $1::text as a")),
      send(2, query("select 'simple'")),
      send(2, parse("select $1::text || $2::text as b")),
      send(2, bind("two", "-parameters")),
      send(2, execute()),
      send(2, sync()),
      send(1, bind("one parameter")),
      send(1, execute()),
      send(1, sync()),
    ];
    await Promise.all(sent);
    const first = readAnswers(Buffer.concat(answers.get(1)!));
    const second = readAnswers(Buffer.concat(answers.get(2)!));
    expect(first.types).not.toContain("E");
    expect(first.rows).toEqual(["one parameter"]);
    expect(second.types).not.toContain("E");
    expect(second.rows).toEqual(["simple", "two-parameters"]);
  });

  it("keeps a connection's transaction whole, and rolls it back when the connection goes away", async () => {
    const queue = new SessionQueue(db);
    const noAnswer = () => undefined;
    await queue.enqueue(1, query("create table kept (n int)"), noAnswer);
    await queue.enqueue(1, query("begin"), noAnswer);
    await queue.enqueue(1, query("insert into kept values (1)"), noAnswer);
    let read = "";
    const other = queue.enqueue(2, query("select count(*) from kept"), (data) => {
      read += readAnswers(Buffer.from(data)).rows.join("");
    });
    // Connection 2 waits while connection 1's transaction is open (connection 1's next statement is served
    // ahead of it); connection 1 goes away, its work rolled back.
    await queue.enqueue(1, query("select 1"), noAnswer);
    expect(read).toBe("");
    expect(queue.getQueueLength()).toBe(1);
    queue.clearQueueForHandler(1);
    await queue.clearTransactionIfNeeded(1);
    await other;
    expect(read).toBe("0");
  });
});
