import { createHash } from "node:crypto";
import { slugify } from "../../kit/slugs/slugify.js";
import { ToolFailure, type InlineTool } from "./tool.js";

/** Base64 of either alphabet, padding optional, nothing else (whitespace is taken out first). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

/** The inline tools of the text family, by id (inputs are valid against their schemas already). */
export const textTools: Record<string, InlineTool> = {
  "text.hash": async (input) => {
    const algorithm = (input.algorithm as string | undefined) ?? "sha256";
    const encoding = (input.encoding as "hex" | "base64" | undefined) ?? "hex";
    const digest = createHash(algorithm)
      .update(input.text as string, "utf8")
      .digest(encoding);
    return { algorithm, encoding, digest };
  },

  "text.base64": async (input) => {
    const text = input.text as string;
    if (input.direction === "encode")
      return { text: Buffer.from(text, "utf8").toString(input.url_safe === true ? "base64url" : "base64") };
    // Node's decoder skips what it cannot read; a tool that answers for a text must refuse it instead.
    const standard = text.replace(/\s+/g, "").replaceAll("-", "+").replaceAll("_", "/");
    if (!BASE64.test(standard)) throw new ToolFailure("tools.input.invalid", "The text is not base64.");
    const bytes = Buffer.from(standard, "base64");
    const decoded = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
    try {
      return { text: decoded.decode(bytes) };
    } catch {
      throw new ToolFailure("tools.input.invalid", "The base64 decodes to bytes that are not UTF-8 text.");
    }
  },

  "text.slug": async (input) => ({
    slug: slugify(input.text as string, "", (input.max_length as number | undefined) ?? 80),
  }),

  "text.case": async (input) => ({ text: cased(input.text as string, input.case as Case) }),
};

type Case = "lower" | "upper" | "title" | "sentence" | "camel" | "pascal" | "snake" | "kebab" | "constant";

/**
 * A text in a case. Lower, upper, title and sentence keep the text's own spacing and punctuation; the joined cases
 * (camel, pascal, snake, kebab, constant) are built from its words: runs of letters and digits, split where a lower
 * letter or digit meets an upper one (`parseHTTPResponse` → parse, HTTP, Response).
 */
function cased(text: string, kind: Case): string {
  switch (kind) {
    case "lower":
      return text.toLowerCase();
    case "upper":
      return text.toUpperCase();
    case "title":
      return text
        .toLowerCase()
        .replace(/(^|[^\p{L}\p{N}'’])(\p{L})/gu, (_, before, first) => before + first.toUpperCase());
    case "sentence":
      return text
        .toLowerCase()
        .replace(/(^\P{L}*|[.!?]\s+\P{L}*)(\p{L})/gu, (_, before, first) => before + first.toUpperCase());
  }
  const words = wordsOf(text).map((word) => word.toLowerCase());
  const capital = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);
  switch (kind) {
    case "camel":
      return words.map((word, index) => (index === 0 ? word : capital(word))).join("");
    case "pascal":
      return words.map(capital).join("");
    case "snake":
      return words.join("_");
    case "kebab":
      return words.join("-");
    case "constant":
      return words.join("_").toUpperCase();
  }
}

function wordsOf(text: string): string[] {
  return text
    .replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, "$1 $2")
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, "$1 $2")
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word !== "");
}
