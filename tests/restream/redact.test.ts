import { describe, expect, it } from "vitest";
import { MAX_LINE_CHARS, redact, redactLine } from "../../services/restream/domain/redact.js";

const KEY = "live_9fQ2+x/Zk ü";

describe("log redaction (pure)", () => {
  it("masks a secret anywhere, as is or URL-encoded in any way", () => {
    const forms = [
      KEY,
      encodeURIComponent(KEY),
      encodeURI(KEY),
      encodeURIComponent(KEY).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()),
      encodeURIComponent(KEY).replace(/%20/g, "+"),
      encodeURIComponent(encodeURIComponent(KEY)),
      // Characters that need no encoding encoded all the same.
      KEY.replace("9", "%39").replace("Z", "%5a"),
    ];
    for (const form of forms) {
      const line = redact(`publishing with ${form}!`, [KEY]);
      expect(line, form).toBe("publishing with ***!");
    }
  });

  it("masks every secret given, the longer first when one holds another", () => {
    expect(redact("a=abc123 b=abc c=zz", ["abc", "abc123", "zz", ""])).toBe("a=*** b=*** c=***");
  });

  it("keeps a URL's scheme and host but masks its path, query and user info", () => {
    expect(redact("rtmp://ingest.example:1935/app/unknownkey: Connection refused", [])).toBe(
      "rtmp://ingest.example:1935/***: Connection refused",
    );
    expect(redact("Output #0, flv, to 'rtmps://live.example/app/k':", [])).toBe(
      "Output #0, flv, to 'rtmps://live.example/***':",
    );
    expect(redact("srt://srt.example:9000?streamid=publish:k&passphrase=p failed", [])).toBe(
      "srt://srt.example:9000/*** failed",
    );
    expect(redact("rtmp://user:pass@host.example/app/k, again", [])).toBe("rtmp://***@host.example/***, again");
    expect(redact("(rtmp://host.example/app/k).", [])).toBe("(rtmp://host.example/***).");
    expect(redact("connecting to rtmp://host.example", [])).toBe("connecting to rtmp://host.example");
  });

  it("masks a URL-encoded URL inside another", () => {
    expect(redact("see https://a.example/cb?to=rtmp%3A%2F%2Fb.example%3A1935%2Fapp%2Fk next", [])).toBe(
      "see https://a.example/*** next",
    );
    expect(redact("to=rtmp%3A%2F%2Fb.example%3A1935%2Fapp%2Fk next", [])).toBe(
      "to=rtmp%3A%2F%2Fb.example%3A1935%2F*** next",
    );
    expect(redact("to=rtmp%3a%2f%2fb.example%2fapp%2fk", [])).toBe("to=rtmp%3A%2F%2Fb.example%2F***");
  });

  it("treats a secret's characters literally, never as a pattern", () => {
    expect(redact("a.b a+b (x)", ["a.b", "(x)"])).toBe("*** a+b ***");
  });

  it("cuts a line past MAX_LINE_CHARS, after masking (a cut secret is not left half visible)", () => {
    const secret = "s".repeat(20);
    const line = redactLine(`${"x".repeat(MAX_LINE_CHARS - 10)}${secret} and more`, [secret]);
    expect(line).toBe(`${"x".repeat(MAX_LINE_CHARS - 10)}*** and m…`);
    expect(line).toHaveLength(MAX_LINE_CHARS);
    expect(redactLine("short", [])).toBe("short");
  });

  it("redacts adversarial lines in linear work: a 2000-character line right, a 200 000-character text at all", () => {
    const colons = `rtmp://h.example/${":".repeat(1980)}k`;
    expect(redactLine(colons, [])).toBe("rtmp://h.example/***");
    const encoded = `rtmp%3A%2F%2Fh.example%2F${":".repeat(1970)}k`;
    expect(redactLine(encoded, [])).toBe("rtmp%3A%2F%2Fh.example%2F***");
    const ending = `to rtmp://h.example/app/k${".".repeat(1980)} next`;
    expect(redactLine(ending, []).startsWith(`to rtmp://h.example/***${".".repeat(100)}`)).toBe(true);
    const schemes = "a.".repeat(1000);
    expect(redactLine(schemes, [])).toBe(`${schemes.slice(0, MAX_LINE_CHARS - 1)}…`);
    // A hundred times longer: a quadratic pattern would take minutes here (10 000 times the work), past the test's
    // timeout; a linear one takes milliseconds.
    const long = `rtmp://h.example/${":".repeat(200_000)}k rtmp%3A%2F%2Fh${":".repeat(200_000)}k ${"a.".repeat(100_000)}`;
    const masked = redact(long, []);
    expect(masked.startsWith("rtmp://h.example/*** rtmp%3A%2F%2Fh%2F*** a.a.")).toBe(true);
  });
});
