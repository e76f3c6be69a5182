import { readFile } from "node:fs/promises";
import mammoth from "mammoth";
import yauzl from "yauzl";
import { DOCS_LIMITS } from "../catalogue/files.js";
import { bounded, type DocumentText } from "./docs-text.js";
import type { RunStop } from "./job-input.js";
import { ToolFailure } from "./tool.js";

/** The bounds a DOCX (a ZIP) is held to before mammoth unpacks it. */
export interface ZipBounds {
  maxEntries: number;
  maxBytes: number;
}

/**
 * Checks a ZIP before any library unpacks it: at most `maxEntries` entries, inflating to at most `maxBytes` in all.
 * The sizes its central directory declares are summed first, and every entry is then inflated (to nowhere) with
 * yauzl, which fails an entry that inflates past its declared size, so a bomb that lies about its sizes is caught
 * after at most `maxBytes` of work, never by memory. Encrypted or unknown compression is unreadable.
 */
export async function checkZip(path: string, bounds: ZipBounds, stop: RunStop): Promise<void> {
  const zip = await yauzl
    .openPromise(path, { lazyEntries: true, autoClose: false, validateEntrySizes: true, strictFileNames: false })
    .catch((error: unknown) => {
      throw new ToolFailure(
        "tools.file.unreadable",
        `The file is not a ZIP archive, as a DOCX is: ${messageOf(error)}`,
      );
    });
  const refused = (why: string) => new ToolFailure("tools.file.refused", `The DOCX ${why}; it was not unpacked.`);
  try {
    if (zip.entryCount > bounds.maxEntries) {
      throw refused(`holds ${zip.entryCount} files, more than the ${bounds.maxEntries} allowed`);
    }
    let declared = 0;
    let inflated = 0;
    const tooLarge = () => refused(`unpacks to more than ${bounds.maxBytes / 1024 ** 2} MiB`);
    for await (const entry of zip.eachEntry()) {
      stop.check();
      declared += entry.uncompressedSize;
      if (declared > bounds.maxBytes) throw tooLarge();
      if (entry.isEncrypted() || !entry.canDecodeFileData()) {
        throw new ToolFailure(
          "tools.file.unreadable",
          "The DOCX is encrypted or compressed in a way it cannot be read.",
        );
      }
      if (entry.fileName.endsWith("/")) continue;
      const stream = await zip.openReadStreamPromise(entry);
      try {
        for await (const chunk of stream) {
          inflated += (chunk as Buffer).length;
          if (inflated > bounds.maxBytes) throw tooLarge();
        }
      } finally {
        stream.destroy();
      }
    }
  } catch (error) {
    if (error instanceof ToolFailure) throw error;
    throw stop.reason ?? zipFailure(error);
  } finally {
    zip.close();
  }
}

/** yauzl's refusal: sizes that lie are a bomb's mark, anything else a damaged archive. */
function zipFailure(error: unknown): ToolFailure {
  const message = messageOf(error);
  if (/too many bytes/.test(message)) {
    return new ToolFailure(
      "tools.file.refused",
      "The DOCX has a file that unpacks past its declared size (a ZIP bomb).",
    );
  }
  return new ToolFailure("tools.file.unreadable", `The DOCX is damaged: ${message}`);
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 300);
}

/** mammoth's Markdown writer: in its API, as convertToHtml is, but missing from its type declarations. */
const convertToMarkdown = (mammoth as unknown as { convertToMarkdown: typeof mammoth.convertToHtml }).convertToMarkdown;

/**
 * A DOCX's text with mammoth, once its ZIP passed `checkZip`; with `html`, also its Markdown (mammoth's writer),
 * which `toHtml` renders through the kit (kit/rich-text: the one way HTML built from user text leaves the platform;
 * a DOCX link to `javascript:` is dropped there). Images are left out (never inlined as data), external files are
 * never read.
 */
export async function docxText(
  path: string,
  html: boolean,
  stop: RunStop,
  toHtml: (markdown: string) => Promise<string>,
): Promise<DocumentText> {
  await checkZip(path, { maxEntries: DOCS_LIMITS.maxZipEntries, maxBytes: DOCS_LIMITS.maxZipBytes }, stop);
  const input = { buffer: await readFile(path) };
  const options = {
    externalFileAccess: false,
    convertImage: mammoth.images.imgElement(async () => ({ src: "" })),
  };
  const unreadable = (error: unknown) =>
    stop.reason ??
    new ToolFailure("tools.file.unreadable", `The file is not a DOCX mammoth reads: ${messageOf(error)}`);
  const raw = await mammoth.extractRawText(input).catch((error: unknown) => {
    throw unreadable(error);
  });
  stop.check();
  const text = bounded(raw.value.trim(), DOCS_LIMITS.maxTextChars);
  if (!html) return text;
  const markdown = await convertToMarkdown(input, options).catch((error: unknown) => {
    throw unreadable(error);
  });
  stop.check();
  return { ...text, html: await toHtml(bounded(markdown.value, DOCS_LIMITS.maxTextChars).text) };
}
