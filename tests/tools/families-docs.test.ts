import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { DOCS_LIMITS } from "../../services/tools/catalogue/files.js";
import { documentFormatOf } from "../../services/tools/families/docs.js";
import { fileTools } from "../../services/tools/families/files.js";
import { ToolFailure } from "../../services/tools/families/tool.js";
import { peakGrowth } from "../support/memory.js";
import {
  billionPagePdf,
  checked,
  circularPagePdf,
  docxParts,
  linkParagraph,
  paragraph,
  pdfWithPages,
  removeRuns,
  runOn,
  zipLyingAboutSizes,
  zipOf,
  type FileSpec,
} from "./fixtures/files.js";

const processDocument = checked("docs.process", fileTools["docs.process"]);
const MIB = 1024 ** 2;
const DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";

afterAll(removeRuns);

const pdf = (bytes: Buffer): FileSpec => ({ name: "paper.pdf", contentType: "application/pdf", bytes });
const docx = (bytes: Buffer): FileSpec => ({ name: "letter.docx", contentType: DOCX, bytes });

/** The ToolFailure a run ends with, and how long it took. */
async function failureOf(run: Promise<unknown>): Promise<{ failure: ToolFailure; ms: number }> {
  const started = Date.now();
  const error = await run.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(ToolFailure);
  return { failure: error as ToolFailure, ms: Date.now() - started };
}

describe("docs.process: PDF (unpdf)", () => {
  it("turns a PDF into text, page by page, as the output and result file 1", async () => {
    const run = await runOn([pdf(pdfWithPages(["Hello PDF world", "Second page here"]))]);
    const { output, files } = await processDocument(run.work);
    const text = "Hello PDF world\n\nSecond page here";
    expect(output).toEqual({ format: "pdf", pages: 2, pages_read: 2, characters: text.length, truncated: false, text });
    expect(files.map((file) => [file.name, file.contentType])).toEqual([["text.txt", "text/plain; charset=utf-8"]]);
    expect(await readFile(files[0].path, "utf8")).toBe(text);
    expect(run.progress[0].percent).toBe(0);
    expect(run.progress.at(-1)!.percent).toBe(100);
  });

  it("reads only the first pages asked for", async () => {
    const run = await runOn([pdf(pdfWithPages(["one", "two", "three"]))], { pages: 2 });
    const { output } = await processDocument(run.work);
    expect(output).toMatchObject({ pages: 3, pages_read: 2, truncated: true, text: "one\n\ntwo" });
  });

  it("bounds a billion-page tree to its first pages: quickly, memory bounded", async () => {
    const run = await runOn([pdf(billionPagePdf())]);
    const started = Date.now();
    let output: Record<string, unknown> = {};
    const growth = await peakGrowth(async () => {
      output = (await processDocument(run.work)).output;
    });
    expect(output).toMatchObject({ pages: 1_000_000_000, pages_read: DOCS_LIMITS.maxPages, truncated: true });
    expect(output.text).toMatch(/^One of a billion\n\nOne of a billion/);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(growth).toBeLessThan(64 * MIB);
  });

  it("fails a page tree that holds itself as unreadable, quickly", async () => {
    const run = await runOn([pdf(circularPagePdf())]);
    const { failure, ms } = await failureOf(processDocument(run.work));
    expect(failure.code).toBe("tools.file.unreadable");
    expect(failure.detail).toMatch(/^The PDF cannot be read \(page 1\)/);
    expect(ms).toBeLessThan(5_000);
  });

  it("fails bytes that only start like a PDF", async () => {
    const run = await runOn([pdf(Buffer.from("%PDF-1.7\nthis is not a PDF at all\n"))]);
    const { failure } = await failureOf(processDocument(run.work));
    expect(failure.code).toBe("tools.file.unreadable");
  });
});

describe("docs.process: DOCX (mammoth)", () => {
  it("turns a DOCX into text and sanitised HTML: no script, no javascript: link", async () => {
    const body = [
      paragraph("Quarterly letter", "Heading1"),
      paragraph("Hello &lt;script&gt;alert(1)&lt;/script&gt; reader"),
      linkParagraph("click me"),
    ].join("");
    const run = await runOn([docx(await zipOf(docxParts(body, "javascript:alert(document.cookie)")))]);
    const { output, files } = await processDocument(run.work);
    const text = "Quarterly letter\n\nHello <script>alert(1)</script> reader\n\nclick me";
    expect(output).toEqual({ format: "docx", characters: text.length, truncated: false, text });
    expect(files.map((file) => [file.name, file.contentType])).toEqual([
      ["text.txt", "text/plain; charset=utf-8"],
      ["document.html", "text/html; charset=utf-8"],
    ]);
    const html = await readFile(files[1].path, "utf8");
    expect(html).toContain("Quarterly letter");
    expect(html).toContain("&lt;script&gt;");
    expect(html).not.toMatch(/<script|href="?javascript:/i);
    expect(html).toContain("click me");
  });

  it("leaves the HTML out when not asked for", async () => {
    const run = await runOn([docx(await zipOf(docxParts(paragraph("plain"))))], { html: false });
    const { output, files } = await processDocument(run.work);
    expect(output.text).toBe("plain");
    expect(files).toHaveLength(1);
  });

  it("refuses a ZIP-bombed DOCX by its declared sizes, unpacking nothing: quickly, memory bounded", async () => {
    const bomb = Buffer.alloc(DOCS_LIMITS.maxZipBytes + MIB); // 65 MiB of zeros deflate to about 65 KiB
    const bytes = await zipOf([...docxParts(paragraph("bomb")), { name: "word/media/zeros.bin", data: bomb }]);
    expect(bytes.length).toBeLessThan(MIB);
    const run = await runOn([docx(bytes)]);
    let outcome: { failure: ToolFailure; ms: number } | undefined;
    const growth = await peakGrowth(async () => {
      outcome = await failureOf(processDocument(run.work));
    });
    expect(outcome!.failure).toMatchObject({
      code: "tools.file.refused",
      detail: "The DOCX unpacks to more than 64 MiB; it was not unpacked.",
    });
    expect(outcome!.ms).toBeLessThan(5_000);
    expect(growth).toBeLessThan(32 * MIB);
  });

  it("refuses a ZIP bomb that lies about its sizes once an entry inflates past what it declared", async () => {
    const zeros = { name: "word/media/zeros.bin", data: Buffer.alloc(8 * MIB) };
    const bytes = await zipLyingAboutSizes([...docxParts(paragraph("liar")), zeros], zeros.name, 1000);
    const run = await runOn([docx(bytes)]);
    let outcome: { failure: ToolFailure; ms: number } | undefined;
    const growth = await peakGrowth(async () => {
      outcome = await failureOf(processDocument(run.work));
    });
    expect(outcome!.failure.detail).toContain("past its declared size");
    expect(outcome!.failure.code).toBe("tools.file.refused");
    expect(growth).toBeLessThan(32 * MIB);
  });

  it("refuses a DOCX of too many entries", async () => {
    const many = Array.from({ length: DOCS_LIMITS.maxZipEntries }, (_, i) => ({
      name: `word/media/${i}.txt`,
      data: "x",
    }));
    const run = await runOn([docx(await zipOf([...docxParts(paragraph("many")), ...many]))]);
    const { failure } = await failureOf(processDocument(run.work));
    expect(failure.code).toBe("tools.file.refused");
    expect(failure.detail).toContain(`more than the ${DOCS_LIMITS.maxZipEntries} allowed`);
  });

  it("fails a ZIP that is no DOCX, and a file that is no ZIP, as unreadable", async () => {
    const notDocx = await runOn([docx(await zipOf([{ name: "hello.txt", data: "hi" }]))]);
    expect((await failureOf(processDocument(notDocx.work))).failure.code).toBe("tools.file.unreadable");
    const notZip = await runOn([docx(Buffer.concat([Buffer.from("PK\x03\x04", "latin1"), randomBytes(200)]))]);
    expect((await failureOf(processDocument(notZip.work))).failure.code).toBe("tools.file.unreadable");
  });
});

describe("docs.process: Markdown (the kit's renderer)", () => {
  it("renders Markdown to sanitised HTML: the script is gone, the text is kept", async () => {
    const source = "# Notes\n\nSome *text* <script>alert(1)</script> and [a link](javascript:alert(1)).\n";
    const run = await runOn([{ name: "notes.md", contentType: "text/markdown", bytes: source }]);
    const { output, files } = await processDocument(run.work);
    expect(output).toMatchObject({ format: "markdown", truncated: false });
    expect(output.text).toContain("Notes Some text");
    const html = await readFile(files[1].path, "utf8");
    expect(html).toContain("<h1>Notes</h1>");
    expect(html).toContain("<em>text</em>");
    expect(html).not.toMatch(/<script|href="?javascript:/i);
  });

  it("takes a text that mentions %PDF- as Markdown when told so", async () => {
    const source = "About the %PDF- header.";
    const auto = await runOn([{ name: "a.md", contentType: "text/markdown", bytes: source }]);
    expect((await failureOf(processDocument(auto.work))).failure.code).toBe("tools.file.unreadable");
    const told = await runOn([{ name: "a.md", contentType: "text/markdown", bytes: source }], { from: "markdown" });
    expect((await processDocument(told.work)).output.text).toBe(source);
  });

  it("fails binary bytes, and a format asked for that the bytes do not bear out", async () => {
    const binary = await runOn([{ name: "x.md", contentType: "text/plain", bytes: randomBytes(512) }]);
    expect((await failureOf(processDocument(binary.work))).failure.code).toBe("tools.file.unreadable");
    const notPdf = await runOn([{ name: "x.pdf", contentType: "application/pdf", bytes: "# just text" }], {
      from: "pdf",
    });
    const { failure } = await failureOf(processDocument(notPdf.work));
    expect(failure).toMatchObject({ code: "tools.file.unreadable", detail: "The file is not a PDF." });
  });

  it("tells the formats by their first bytes", () => {
    expect(documentFormatOf(Buffer.from("%PDF-1.4\n"))).toBe("pdf");
    expect(documentFormatOf(Buffer.from("\n\n%PDF-1.4\n"))).toBe("pdf");
    expect(documentFormatOf(Buffer.from("PK\x03\x04rest", "latin1"))).toBe("docx");
    expect(documentFormatOf(Buffer.from("# Title"))).toBe("markdown");
  });
});
