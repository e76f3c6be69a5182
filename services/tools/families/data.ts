import QRCode from "qrcode";
import { v4, v7 } from "uuid";
import { MAX_VALIDATION_ERRORS } from "../catalogue/data.js";
import { SchemaSandbox } from "../domain/run/schema-sandbox.js";
import type { JsonObject } from "../catalogue/descriptor.js";
import { ToolFailure, type InlineTool } from "./tool.js";

/** Callers' schemas run here, two at a time per process (the machine's cores are the services' too). */
const sandbox = new SchemaSandbox(2, MAX_VALIDATION_ERRORS);

/** The inline tools of the data family and the generators beside it (UUIDs, QR codes), by id. */
export const dataTools: Record<string, InlineTool> = {
  "data.json-format": async (input) => {
    const text = input.text as string;
    try {
      JSON.parse(text);
    } catch (error) {
      throw new ToolFailure("tools.input.invalid", `The text is not JSON: ${(error as Error).message}.`);
    }
    const indent = input.style === "minify" ? undefined : " ".repeat((input.indent as number | undefined) ?? 2);
    return { text: reformatted(text, indent) };
  },

  "data.json-validate": async (input, { signal }) => {
    const verdict = await sandbox.validate(input.schema, input.document, signal);
    if ("fault" in verdict)
      throw new ToolFailure("tools.input.invalid", `The schema is not one this tool can use: ${verdict.fault}.`);
    return verdict;
  },

  "id.uuid": async (input) => {
    const make = input.version === 7 ? v7 : v4;
    // uuid's v7 keeps a counter within a millisecond, so a batch comes out in ascending order.
    return { uuids: Array.from({ length: (input.count as number | undefined) ?? 1 }, () => make()) };
  },

  "qr.code": async (input) => qrCode(input),
};

async function qrCode(input: JsonObject): Promise<JsonObject> {
  const text = input.text as string;
  const errorCorrectionLevel = (input.error_correction as "L" | "M" | "Q" | "H" | undefined) ?? "M";
  let code: QRCode.QRCode;
  try {
    code = QRCode.create(text, { errorCorrectionLevel });
  } catch (error) {
    throw new ToolFailure("tools.input.invalid", `The text does not fit a QR code: ${(error as Error).message}.`);
  }
  const svg = await QRCode.toString(text, {
    type: "svg",
    errorCorrectionLevel,
    version: code.version,
    margin: (input.margin as number | undefined) ?? 4,
    color: {
      dark: (input.dark as string | undefined) ?? "#000000",
      light: (input.light as string | undefined) ?? "#ffffff",
    },
  });
  return { svg, version: code.version, size: code.modules.size };
}

/**
 * JSON text (already parsed once, so well formed) written again token by token: `indent` per level with one value
 * per line, or none at all. Never through values, so a number keeps every digit it was written with
 * (12345678901234567890 stays so) and a repeated key stays too.
 */
function reformatted(text: string, indent: string | undefined): string {
  const out: string[] = [];
  let depth = 0;
  const newline = () => (indent === undefined ? "" : "\n" + indent.repeat(depth));
  for (let at = 0; at < text.length; at++) {
    const char = text[at];
    if (char === " " || char === "\t" || char === "\n" || char === "\r") continue;
    if (char === '"') {
      const end = stringEnd(text, at);
      out.push(text.slice(at, end));
      at = end - 1;
    } else if (char === "{" || char === "[") {
      const next = skipSpace(text, at + 1);
      // An empty object or array stays on its line.
      if (text[next] === "}" || text[next] === "]") {
        out.push(char + text[next]);
        at = next;
      } else {
        depth++;
        out.push(char + newline());
      }
    } else if (char === "}" || char === "]") {
      depth--;
      out.push(newline() + char);
    } else if (char === ",") out.push("," + newline());
    else if (char === ":") out.push(indent === undefined ? ":" : ": ");
    else {
      // A number, true, false or null: to the next space or structural character.
      let end = at + 1;
      while (end < text.length && !/[\s"{}[\],:]/.test(text[end])) end++;
      out.push(text.slice(at, end));
      at = end - 1;
    }
  }
  return out.join("");
}

/** Where the string starting at `start` (its opening quote) ends: just past its closing quote. */
function stringEnd(text: string, start: number): number {
  for (let at = start + 1; ; at++) {
    if (text[at] === "\\") at++;
    else if (text[at] === '"') return at + 1;
  }
}

function skipSpace(text: string, at: number): number {
  while (text[at] === " " || text[at] === "\t" || text[at] === "\n" || text[at] === "\r") at++;
  return at;
}
