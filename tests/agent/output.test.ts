import { describe, expect, it } from "vitest";
import { CHUNK_BYTES, chunks, OutputPump } from "../../agent/output.js";
import { until } from "../support/until.js";

function pump(cap = 1 << 30) {
  const sent: { stream: number; seq: number; text: string }[] = [];
  let capped = 0;
  const output = new OutputPump(
    cap,
    (stream, seq, text) => sent.push({ stream, seq, text }),
    () => capped++,
  );
  return { output, sent, capped: () => capped };
}

describe("job output", () => {
  it("is cut into chunks of at most 64 KiB of UTF-8, never inside a character", () => {
    const text = "é".repeat(CHUNK_BYTES);
    const pieces = [...chunks(text)];
    expect(pieces.length).toBe(2);
    for (const piece of pieces) expect(Buffer.byteLength(piece)).toBeLessThanOrEqual(CHUNK_BYTES);
    expect(pieces.join("")).toBe(text);
  });

  it("keeps a character split between two reads whole, and numbers chunks from 1 across both streams", () => {
    const { output, sent } = pump();
    const bytes = Buffer.from("héllo");
    output.write(1, bytes.subarray(0, 2));
    output.write(2, Buffer.from("warn\n"));
    output.write(1, bytes.subarray(2));
    output.end();
    expect(sent).toEqual([
      { stream: 1, seq: 1, text: "h" },
      { stream: 2, seq: 2, text: "warn\n" },
      { stream: 1, seq: 3, text: "éllo" },
    ]);
  });

  it("sends what one turn of the event loop brought as one frame", async () => {
    const { output, sent } = pump();
    for (const line of ["a\n", "b\n", "c\n"]) output.write(1, Buffer.from(line));
    await until(() => sent.length > 0);
    expect(sent).toEqual([{ stream: 1, seq: 1, text: "a\nb\nc\n" }]);
  });

  it("sends no more than its cap and says so once", () => {
    const { output, sent, capped } = pump(4);
    output.write(1, Buffer.from("abc"));
    output.write(1, Buffer.from("defg"));
    output.write(2, Buffer.from("more"));
    output.end();
    expect(sent.map((chunk) => chunk.text).join("")).toBe("abcd");
    expect(capped()).toBe(1);
  });
});
