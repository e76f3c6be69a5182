import { createHash } from "node:crypto";
import { Readable, pipeline } from "node:stream";
import { createGzip, gzipSync } from "node:zlib";
import { pack, type Headers } from "tar-stream";
import { describe, expect, it } from "vitest";
import {
  UploadRefused,
  validateUpload,
  type EntryFile,
  type LogLine,
  type UploadLimits,
  type UploadSource,
} from "../../services/host/domain/archive/index.js";

const MiB = 1024 * 1024;
const LIMITS: UploadLimits = { deployFiles: 100, deployBytes: 4 * MiB, fileBytes: MiB, storageLeft: 8 * MiB };

/** An entry for pack: `pax` records (which pack writes, though its types omit them), `content` only for files. */
type PackEntry = Headers & { pax?: Record<string, string>; content?: string | Buffer };

/** A tar built with tar-stream's pack. */
async function tarOf(entries: PackEntry[]): Promise<Buffer> {
  const packer = pack();
  for (const { content, ...header } of entries) packer.entry(header, content ?? "");
  packer.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of packer) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** A ustar header written by hand, for what pack cannot write (GNU long names, unknown types, a 10 GB size). */
function rawHeader(name: string, typeflag: string, size: number): Buffer {
  const block = Buffer.alloc(512);
  block.write(name, 0, 100);
  block.write("0000644\0", 100);
  block.write("0000000\0", 108);
  block.write("0000000\0", 116);
  if (size.toString(8).length > 11) {
    block[124] = 0x80; // base-256, as GNU tar writes sizes of 8 GiB and more
    for (let i = 11, rest = size; i > 0; i--, rest = Math.floor(rest / 256)) block[124 + i] = rest % 256;
  } else block.write(`${size.toString(8).padStart(11, "0")}\0`, 124);
  block.write("00000000000\0", 136);
  block.write(typeflag, 156);
  block.write("ustar\x0000", 257);
  block.fill(" ", 148, 156);
  const sum = block.reduce((total, byte) => total + byte, 0);
  block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  return block;
}
const padded = (data: Buffer) => Buffer.concat([data, Buffer.alloc((512 - (data.length % 512)) % 512)]);
const END = Buffer.alloc(1024);

/** A body as a client sends it: in small chunks, so entries straddle them. */
async function* chunked(data: Buffer, size = 1000): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < data.length; at += size) yield data.subarray(at, at + size);
}
const archive = (data: Buffer): UploadSource => ({ kind: "archive", body: chunked(data) });
const files = (...parts: { name: string; content: string | Buffer }[]): UploadSource => ({
  kind: "files",
  files: (async function* () {
    for (const { name, content } of parts)
      yield { name, contentType: "application/octet-stream", body: chunked(Buffer.from(content)) };
  })(),
});

/** Runs the validator, keeping what it accepted and logged, and its refusal if any. */
async function run(source: UploadSource, limits: UploadLimits = LIMITS) {
  const accepted: EntryFile[] = [];
  const log: LogLine[] = [];
  try {
    const result = await validateUpload(
      source,
      limits,
      async (file) => void accepted.push(file),
      (line) => log.push(line),
    );
    return { accepted, log, result, refused: undefined };
  } catch (error) {
    if (!(error instanceof UploadRefused)) throw error;
    return {
      accepted,
      log,
      result: undefined,
      refused: { path: error.path, rule: error.rule, message: error.message },
    };
  }
}

/** The refusal of a one-entry archive (a file unless said), as `rule path`. */
async function refusalOf(entries: PackEntry[]) {
  const { refused, log } = await run(archive(await tarOf(entries)));
  expect(log.filter((line) => line.level === "error")).toHaveLength(1);
  return refused && `${refused.rule} ${refused.path}`;
}

describe("an archive's names", () => {
  it.each([
    ["../../etc/passwd", "traversal"],
    ["/etc/passwd", "traversal"],
    ["site/../../x.html", "traversal"],
    ["a\\b.html", "traversal"],
    ["C:/x.html", "traversal"],
    ["a//b.html", "traversal"],
    ["a/./b.html", "traversal"],
    ["new\nline.html", "traversal"],
    [`${"a".repeat(256)}.html`, "traversal"],
    [`${"abcdefgh/".repeat(114)}x.html`, "traversal"],
    ["index.php", "server_code"],
    ["shell.php.jpg", "server_code"],
    ["cgi/run.CGI", "server_code"],
    ["deep/.htaccess", "server_code"],
    ["web.config", "server_code"],
    ["tool.exe", "server_code"],
    [".env", "hidden"],
    [".git/config", "hidden"],
    ["assets/.DS_Store", "hidden"],
    ["sub/.well-known/x.txt", "hidden"],
    ["README", "file_type"],
    ["report.docx", "file_type"],
    ["x.constructor", "file_type"],
  ])("refuses %j: %s", async (name, rule) => {
    // PAX carries the name whole: longer than ustar's fields, or holding control characters.
    expect(await refusalOf([{ name: "entry.txt", pax: { path: name }, content: "x" }])).toBe(
      `${rule} ${name.length > 1024 ? `${name.slice(0, 1024)}…` : name.replace("\n", "\\x0a")}`,
    );
  });

  it("refuses a NUL in a name (PAX path), showing it escaped", async () => {
    expect(await refusalOf([{ name: "entry.txt", pax: { path: "a\0.html" }, content: "x" }])).toBe(
      "traversal a\\x00.html",
    );
  });

  it("validates the name a PAX header gives, not the ustar name", async () => {
    const data = await tarOf([{ name: "innocent.txt", pax: { path: "/etc/passwd" }, content: "root:x:0:0" }]);
    expect(data.includes("/etc/passwd")).toBe(true);
    expect((await run(archive(data))).refused).toMatchObject({ rule: "traversal", path: "/etc/passwd" });
  });

  it("validates the name a GNU long-name header gives, not the short one", async () => {
    const long = `${"a/".repeat(60)}../../../etc/cron.d/job.txt`;
    const data = Buffer.concat([
      rawHeader("././@LongLink", "L", long.length + 1),
      padded(Buffer.from(`${long}\0`)),
      rawHeader("short.txt", "0", 2),
      padded(Buffer.from("hi")),
      END,
    ]);
    expect((await run(archive(data))).refused).toMatchObject({ rule: "traversal", path: long });
  });
});

describe("an archive's entry types", () => {
  it.each([
    [{ name: "root", type: "symlink", linkname: "/" }, "link root"],
    [{ name: "passwd.txt", type: "link", linkname: "/etc/passwd" }, "link passwd.txt"],
    [{ name: "pipe", type: "fifo" }, "special pipe"],
    [{ name: "null", type: "character-device", devmajor: 1, devminor: 3 }, "special null"],
    [{ name: "disk", type: "block-device", devmajor: 8 }, "special disk"],
    [{ name: "big.txt", type: "contiguous-file" }, "special big.txt"],
  ] as const)("refuses %j", async (header, refusal) => {
    expect(await refusalOf([{ ...header }])).toBe(refusal);
  });

  it("refuses a GNU sparse file and an unknown type", async () => {
    for (const typeflag of ["S", "V", "Z"]) {
      const data = Buffer.concat([rawHeader("odd.txt", typeflag, 0), END]);
      expect((await run(archive(data))).refused).toMatchObject({ rule: "special", path: "odd.txt" });
    }
  });

  it("skips folders, so a refused one stops the upload but a plain one adds nothing", async () => {
    const { accepted, refused } = await run(
      archive(
        await tarOf([
          { name: "assets", type: "directory" },
          { name: "assets/a.css", content: "a{}" },
        ]),
      ),
    );
    expect(refused).toBeUndefined();
    expect(accepted.map((file) => file.path)).toEqual(["assets/a.css"]);
    expect(await refusalOf([{ name: ".git", type: "directory" }])).toBe("hidden .git");
  });
});

describe("duplicates", () => {
  it.each([
    ["a.html", "A.html"],
    ["Docs/Index.HTML", "docs/index.html"],
    ["caf\u00e9.html", "cafe\u0301.html"], // NFC and NFD of the same name
    ["same.html", "./same.html"],
    ["page.html", "page.html/inner.html"], // a file where a folder is
  ])("refuses %j then %j", async (first, second) => {
    const { accepted, refused } = await run(
      archive(
        await tarOf([
          { name: "x.txt", pax: { path: first }, content: "1" },
          { name: "y.txt", pax: { path: second }, content: "2" },
        ]),
      ),
    );
    expect(accepted.map((file) => file.path)).toEqual([first.normalize("NFC")]);
    expect(refused).toMatchObject({ rule: "duplicate", path: second });
  });

  it("refuses a file and a folder of one name, in either order", async () => {
    const folderFirst = await run(
      archive(
        await tarOf([
          { name: "docs.txt", type: "directory" },
          { name: "DOCS.TXT", content: "x" },
        ]),
      ),
    );
    expect(folderFirst.refused).toMatchObject({ rule: "duplicate", path: "DOCS.TXT" });
    const fileFirst = await run(
      archive(
        await tarOf([
          { name: "docs.txt", content: "x" },
          { name: "Docs.TXT", type: "directory" },
        ]),
      ),
    );
    expect(fileFirst.refused).toMatchObject({ rule: "duplicate", path: "Docs.TXT" });
  });
});

describe("an archive that is not one", () => {
  it("refuses a truncated tar and a truncated tar.gz", async () => {
    const whole = await tarOf([{ name: "index.html", content: "x".repeat(5000) }]);
    const cut = whole.subarray(0, 2048);
    expect((await run(archive(cut))).refused).toMatchObject({ rule: "archive", path: "" });
    const zipped = gzipSync(whole);
    const gzCut = await run(archive(zipped.subarray(0, zipped.length - 10)));
    expect(gzCut.refused).toMatchObject({ rule: "archive", path: "" });
    expect(gzCut.log.filter((line) => line.level === "error")).toHaveLength(1);
  });

  it("refuses bytes that are not a tar, plain or gzipped, and an empty upload", async () => {
    const text = Buffer.from("<html>not an archive</html>\n".repeat(40));
    for (const data of [text, gzipSync(text), Buffer.from([0x1f, 0x8b, 1, 2, 3])])
      expect((await run(archive(data))).refused).toMatchObject({ rule: "archive", path: "" });
    expect((await run(archive(Buffer.alloc(0)))).refused).toMatchObject({ rule: "archive" });
    expect((await run(archive(await tarOf([{ name: "empty", type: "directory" }])))).refused).toMatchObject({
      rule: "archive",
      message: "the upload holds no files",
    });
  });

  it("throws the source's own failure (the client gone) as it came, not as a refusal", async () => {
    const tar = await tarOf([{ name: "index.html", content: "x".repeat(100_000) }]);
    for (const data of [tar, gzipSync(tar)]) {
      const gone = new Error("client gone");
      const body = (async function* () {
        yield data.subarray(0, 1000);
        throw gone;
      })();
      await expect(
        validateUpload(
          { kind: "archive", body },
          LIMITS,
          async () => {},
          () => {},
        ),
      ).rejects.toBe(gone);
    }
  });

  it("throws a failure of `accept` (the store down) as it came", async () => {
    const down = new Error("store down");
    const data = await tarOf([{ name: "index.html", content: "x" }]);
    const accept = () => Promise.reject(down);
    await expect(validateUpload(archive(data), LIMITS, accept, () => {})).rejects.toBe(down);
  });
});

/** 64 KiB blocks of zeros up to `total`, counting what was pulled, and the peak memory while pulling. */
function zeros(total: number, seen: { bytes: number; peak: number }) {
  const block = Buffer.alloc(64 * 1024);
  return (async function* () {
    for (; seen.bytes < total; seen.bytes += block.length) {
      const { heapUsed, arrayBuffers } = process.memoryUsage();
      seen.peak = Math.max(seen.peak, heapUsed + arrayBuffers);
      yield block;
    }
  })();
}
function gzipped(parts: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  const gzip = createGzip({ level: 1 });
  pipeline(Readable.from(parts, { objectMode: false }), gzip, () => undefined);
  return gzip;
}

describe("quotas, counted while the upload streams", () => {
  const GiB = 1024 * MiB;
  const bombs: [string, (seen: { bytes: number; peak: number }) => AsyncIterable<Uint8Array>, string][] = [
    [
      "10 GB of 1 MiB files of zeros",
      (seen) =>
        (async function* () {
          for (let i = 0; seen.bytes < 10 * GiB; i++) {
            yield rawHeader(`zeros-${i}.txt`, "0", MiB);
            yield* zeros(seen.bytes + MiB, seen);
          }
        })(),
      "the deploy is larger than 4194304 bytes (the deploy_bytes quota)",
    ],
    [
      "one 10 GB file of zeros",
      (seen) =>
        (async function* () {
          yield rawHeader("zeros.txt", "0", 10 * GiB);
          yield* zeros(10 * GiB, seen);
        })(),
      "the file is larger than 1048576 bytes (the file_bytes quota)",
    ],
    [
      "a 10 GB PAX header (tar-stream holds a long header whole)",
      (seen) =>
        (async function* () {
          yield rawHeader("PaxHeader", "x", 10 * GiB);
          yield* zeros(10 * GiB, seen);
        })(),
      "the archive holds too many bytes outside its files (a compression bomb?)",
    ],
    [
      "10 GB of zeros and no header (a sparse tar of nothing)",
      (seen) => zeros(10 * GiB, seen),
      "the archive holds too many bytes outside its files (a compression bomb?)",
    ],
  ];

  it.each(bombs)("stops a gzip bomb of %s at the cap, with memory flat", async (_name, bomb, message) => {
    const seen = { bytes: 0, peak: 0 };
    const { heapUsed, arrayBuffers } = process.memoryUsage();
    const { refused, accepted } = await run({ kind: "archive", body: gzipped(bomb(seen)) });
    expect(refused).toMatchObject({ rule: "quota", message });
    expect(accepted.reduce((sum, file) => sum + file.bytes.length, 0)).toBeLessThanOrEqual(LIMITS.deployBytes);
    // Pulled: the cap and the buffers of two gzip streams (each compressed byte of them ~1000 of zeros), not 10 GB.
    expect(seen.bytes).toBeLessThan(64 * MiB);
    expect(seen.peak - (heapUsed + arrayBuffers)).toBeLessThan(128 * MiB);
  });

  it("stops 100,000 empty files at deployFiles, reading little past it", async () => {
    let headers = 0;
    const body = (async function* () {
      for (; headers < 100_000; headers += 100)
        yield Buffer.concat(Array.from({ length: 100 }, (_, i) => rawHeader(`f${headers + i}.txt`, "0", 0)));
      yield END;
    })();
    const { accepted, refused, log } = await run({ kind: "archive", body });
    expect(accepted).toHaveLength(100);
    expect(log.filter((line) => line.level === "info")).toHaveLength(100);
    expect(refused).toMatchObject({ rule: "quota", path: "f100.txt", message: "the deploy has more than 100 files" });
    expect(headers).toBeLessThan(1000);
  });

  it("refuses a file over fileBytes, from a tar header before its bytes and from a part as it streams", async () => {
    const big = Buffer.alloc(MiB + 1, "a");
    expect(await refusalOf([{ name: "big.txt", content: big }])).toBe("quota big.txt");
    const { accepted, refused } = await run(
      files({ name: "ok.txt", content: "ok" }, { name: "big.txt", content: big }),
    );
    expect(accepted.map((file) => file.path)).toEqual(["ok.txt"]);
    expect(refused).toMatchObject({ rule: "quota", path: "big.txt", message: expect.stringContaining("file_bytes") });
  });

  it("refuses past the project's storage left, and takes exactly up to every cap", async () => {
    const half = Buffer.alloc(MiB / 2, "b");
    const limits = { ...LIMITS, storageLeft: MiB };
    const over = await run(
      files({ name: "1.txt", content: half }, { name: "2.txt", content: half }, { name: "3.txt", content: "c" }),
      limits,
    );
    expect(over.accepted).toHaveLength(2);
    expect(over.refused).toMatchObject({
      rule: "quota",
      path: "3.txt",
      message: "the project's storage has 1048576 bytes left",
    });
    const exact = await run(files({ name: "1.txt", content: half }, { name: "2.txt", content: half }), {
      deployFiles: 2,
      deployBytes: MiB,
      fileBytes: MiB / 2,
      storageLeft: MiB,
    });
    expect(exact.result).toEqual({ files: 2, bytes: MiB });
  });
});

describe("multipart files", () => {
  it("checks each part's name as a tar entry's", async () => {
    for (const [name, rule] of [
      ["../x", "traversal"],
      ["", "traversal"],
      ["dir/", "traversal"],
      [".env", "hidden"],
      ["index.php", "server_code"],
      ["a.bin", "file_type"],
    ])
      expect((await run(files({ name, content: "x" }))).refused).toMatchObject({ rule, path: name });
    const twice = await run(files({ name: "a.html", content: "1" }, { name: "A.HTML", content: "2" }));
    expect(twice.refused).toMatchObject({ rule: "duplicate", path: "A.HTML" });
  });
});

describe("a good site", () => {
  const site: [string, string, string | Buffer][] = [
    ["index.html", "text/html; charset=utf-8", "<!doctype html><h1>hi</h1>"],
    ["assets/app.min.js", "text/javascript; charset=utf-8", "console.log(1)"],
    ["assets/style.css", "text/css; charset=utf-8", "h1{color:red}"],
    ["img/logo.PNG", "image/png", Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2])],
    ["fonts/a.woff2", "font/woff2", Buffer.from([1, 2, 3])],
    ["data/empty.json", "application/json", ""],
    [".well-known/security.txt", "text/plain; charset=utf-8", "Contact: mailto:sec@example.com\n"],
    [".well-known/apple-app-site-association", "application/json", "{}"],
    ["caf\u00e9/menu.html", "text/html; charset=utf-8", "<p>menu</p>"],
  ];
  const expected = site.map(([path, contentType, content]) => ({
    path,
    contentType,
    sha256: createHash("sha256").update(content).digest("hex"),
    bytes: new Uint8Array(Buffer.from(content)),
  }));

  it("is accepted from a tar.gz as `tar -C dist .` writes it: paths, types and digests right, logged", async () => {
    const data = await tarOf([
      { name: "./", type: "directory" },
      { name: "./assets/", type: "directory" },
      { name: "./.well-known/", type: "directory" },
      ...site.map(([path, , content]) => ({ name: `./${path.normalize("NFD")}`, content })),
    ]);
    const { accepted, log, result, refused } = await run(archive(gzipSync(data)));
    expect(refused).toBeUndefined();
    expect(
      accepted.map(({ path, contentType, sha256, bytes }) => ({
        path,
        contentType,
        sha256,
        bytes: new Uint8Array(bytes),
      })),
    ).toEqual(expected);
    expect(accepted.find((file) => file.path === "img/logo.PNG")?.compressible).toBe(false);
    expect(accepted.find((file) => file.path === "index.html")?.compressible).toBe(true);
    const total = site.reduce((sum, [, , content]) => sum + Buffer.byteLength(content), 0);
    expect(result).toEqual({ files: site.length, bytes: total });
    expect(log).toHaveLength(site.length);
    expect(log[0]).toEqual({
      level: "info",
      path: "index.html",
      rule: "",
      message: `accepted: text/html; charset=utf-8, ${Buffer.byteLength(site[0][2])} bytes`,
    });
  });

  it("is accepted as multipart parts the same way, whatever types the parts declared", async () => {
    const { accepted, refused } = await run(files(...site.map(([name, , content]) => ({ name, content }))));
    expect(refused).toBeUndefined();
    expect(accepted.map(({ path, contentType, sha256 }) => ({ path, contentType, sha256 }))).toEqual(
      expected.map(({ path, contentType, sha256 }) => ({ path, contentType, sha256 })),
    );
  });

  it("is accepted from `git archive`, whose PAX global header is no entry", async () => {
    const record = "52 comment=0123456789abcdef0123456789abcdef01234567\n";
    const file = await tarOf([{ name: "site/index.html", content: "<p>hi</p>" }]);
    const data = Buffer.concat([rawHeader("pax_global_header", "g", record.length), padded(Buffer.from(record)), file]);
    const { accepted, refused } = await run(archive(data));
    expect(refused).toBeUndefined();
    expect(accepted.map((entry) => entry.path)).toEqual(["site/index.html"]);
  });

  it("stops at the first fault after accepting what came before, with one error line", async () => {
    const { accepted, log, refused } = await run(
      archive(
        await tarOf([
          { name: "index.html", content: "ok" },
          { name: "evil", type: "symlink", linkname: "/" },
          { name: "after.html", content: "never read" },
        ]),
      ),
    );
    expect(accepted.map((file) => file.path)).toEqual(["index.html"]);
    expect(refused).toMatchObject({ rule: "link", path: "evil", message: "a symlink to /: links are refused" });
    expect(log.map((line) => `${line.level} ${line.path} ${line.rule}`)).toEqual([
      "info index.html ",
      "error evil link",
    ]);
  });
});
