import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { markdownRendering } from "../../kit/rich-text/rendering.js";
import { DOCS_LIMITS } from "../catalogue/files.js";
import { docxText } from "./docs-docx.js";
import { pdfText } from "./docs-pdf.js";
import { bounded, type DocumentText } from "./docs-text.js";
import { headOf, RunStop, theInputFile } from "./job-input.js";
import { ToolFailure, type JobResultFile, type JobTool } from "./tool.js";

export type DocumentFormat = "pdf" | "docx" | "markdown";

/** The input docs.process takes (valid against its schema already). */
interface DocumentRequest {
  from?: "auto" | DocumentFormat;
  pages?: number;
  html?: boolean;
}

/** Bytes read to tell a document's format: a PDF's header may stand anywhere in its first 1024. */
const HEAD_BYTES = 1024;

/** A document's format by its first bytes: a PDF header, a ZIP's (a DOCX), else text taken as Markdown. */
export function documentFormatOf(head: Buffer): DocumentFormat {
  if (head.includes("%PDF-", 0, "latin1")) return "pdf";
  if (head.subarray(0, 4).equals(Buffer.from("PK\x03\x04", "latin1"))) return "docx";
  return "markdown";
}

/**
 * The format to read the file as: the one asked for (a PDF or DOCX must bear it out in its bytes; Markdown is any
 * text, one that merely mentions `%PDF-` included), else the one its bytes show.
 */
function formatOf(asked: DocumentRequest["from"], head: Buffer): DocumentFormat {
  const found = documentFormatOf(head);
  if (asked === undefined || asked === "auto") return found;
  if (asked === "markdown" || asked === found) return asked;
  throw new ToolFailure("tools.file.unreadable", `The file is not ${asked === "pdf" ? "a PDF" : "a DOCX"}.`);
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Markdown: UTF-8 text (no NUL), rendered to sanitised HTML and plain text by the kit's renderer on its worker
 * threads (kit/rich-text/rendering.ts: off the event loop, within its time budget). The source is bounded first.
 */
async function markdownText(path: string, html: boolean): Promise<DocumentText> {
  let source: string;
  try {
    source = UTF8.decode(await readFile(path));
  } catch {
    throw new ToolFailure("tools.file.unreadable", "The file is not a PDF, a DOCX or UTF-8 text.");
  }
  if (source.includes("\0")) throw new ToolFailure("tools.file.unreadable", "The file is not a PDF, a DOCX or text.");
  const kept = bounded(source.replace(/^\uFEFF/, ""), DOCS_LIMITS.maxTextChars);
  const rendering = markdownRendering();
  const text = await rendering.text(kept.text);
  return { text, truncated: kept.truncated, html: html ? await rendering.html(kept.text) : undefined };
}

/**
 * docs.process: a PDF's text (its first pages), a DOCX's text and HTML (its ZIP checked against bombs first), or
 * Markdown as sanitised HTML. Result file 1 is the text (text/plain), file 2 the HTML when there is one; the
 * output carries the text's first characters.
 */
export const processDocument: JobTool = async (work) => {
  const stop = new RunStop(work, DOCS_LIMITS.timeoutMs);
  const request = work.input as DocumentRequest;
  const file = theInputFile(work);
  await work.progress(0, "Reading the document");
  const format = formatOf(request.from, await headOf(file.path, HEAD_BYTES));
  const html = request.html ?? true;
  const progress = (percent: number) => work.progress(percent, "Reading pages");
  const read =
    format === "pdf"
      ? await pdfText(file.path, request.pages ?? DOCS_LIMITS.maxPages, stop, progress)
      : format === "docx"
        ? await docxText(file.path, html, stop, (markdown) => markdownRendering().html(markdown))
        : await markdownText(file.path, html);
  stop.check();

  const files: JobResultFile[] = [
    { name: "text.txt", contentType: "text/plain; charset=utf-8", path: join(work.workDir, "text.txt") },
  ];
  await writeFile(files[0].path, read.text);
  if (read.html !== undefined) {
    files.push({
      name: "document.html",
      contentType: "text/html; charset=utf-8",
      path: join(work.workDir, "document.html"),
    });
    await writeFile(files[1].path, read.html);
  }
  await work.progress(100, "Done");
  const pages = read.pages === undefined ? {} : { pages: read.pages, pages_read: read.pagesRead };
  return {
    output: {
      format,
      ...pages,
      characters: read.text.length,
      truncated: read.truncated,
      text: bounded(read.text, DOCS_LIMITS.maxOutputTextChars).text,
    },
    files,
  };
};
