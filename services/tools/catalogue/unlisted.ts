import type { ToolDescriptor } from "./descriptor.js";

/**
 * Tools the run API never serves here: planned ones (described, not built yet), mirrors of another site's
 * tools (described so the catalogue is complete, run there), and tools a page runs in the browser (listed,
 * with no API: their input schema is `false`).
 */
export const unlistedCatalogue: readonly ToolDescriptor[] = [
  {
    id: "img.ocr",
    name: "Text from an image (OCR)",
    summary: "Reads the printed text in a photo or a scan, with each line's position.",
    family: "img",
    execution: "job",
    api: true,
    catalogue: "planned",
    input: {
      type: "object",
      additionalProperties: false,
      properties: {
        languages: {
          type: "array",
          description: "ISO 639-2 codes of the languages the text is in, most likely first.",
          items: { type: "string", pattern: "^[a-z]{3}$" },
          minItems: 1,
          maxItems: 4,
          default: ["eng"],
        },
      },
    },
    output: {
      type: "object",
      additionalProperties: false,
      required: ["text", "lines"],
      properties: {
        text: { type: "string" },
        lines: {
          type: "array",
          items: {
            type: "object",
            additionalProperties: false,
            required: ["text", "confidence", "box"],
            properties: {
              text: { type: "string" },
              confidence: { type: "number", minimum: 0, maximum: 1 },
              box: {
                type: "array",
                description: "left, top, width and height in pixels",
                items: { type: "integer", minimum: 0 },
                minItems: 4,
                maxItems: 4,
              },
            },
          },
        },
      },
    },
    files: { accept: ["image/png", "image/jpeg", "image/webp", "image/tiff"], maxCount: 1, maxBytes: 20 * 1024 ** 2 },
    limits: { timeoutMs: 120_000, maxInputBytes: 4_096 },
    auth: { capability: "tools.tool.run", anonymous: false },
    quotaClass: "file",
    cost: 5,
    egress: false,
    hosts: [],
    docs: "services/tools/README.md#planned-mirror-and-page-tools",
  },
  {
    id: "net.dns-propagation",
    name: "DNS propagation check",
    summary: "Asks public resolvers around the world what a name resolves to (run by dnschecker.org).",
    family: "net",
    execution: "inline",
    api: true,
    catalogue: "mirror",
    input: {
      type: "object",
      additionalProperties: false,
      required: ["name"],
      properties: {
        name: {
          type: "string",
          maxLength: 253,
          pattern: "^([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\\.)+[a-zA-Z]{2,63}\\.?$",
        },
        type: { enum: ["A", "AAAA", "CNAME", "MX", "NS", "TXT"], default: "A" },
      },
    },
    output: {
      type: "object",
      additionalProperties: false,
      required: ["answers"],
      properties: {
        answers: {
          type: "array",
          items: {
            type: "object",
            additionalProperties: false,
            required: ["resolver", "location", "records"],
            properties: {
              resolver: { type: "string" },
              location: { type: "string" },
              records: { type: "array", items: { type: "string" } },
            },
          },
        },
      },
    },
    limits: { timeoutMs: 15_000, maxInputBytes: 1_024, perTargetPerMinute: 6 },
    auth: { capability: "tools.net.probe", anonymous: false },
    quotaClass: "probe",
    cost: 1,
    egress: true,
    hosts: ["dnschecker.org"],
    docs: "https://dnschecker.org/",
  },
  {
    id: "img.color-picker",
    name: "Colour picker",
    summary: "Picks colours from an image in your browser: the image never leaves the page.",
    family: "img",
    execution: "inline",
    api: false,
    catalogue: "available",
    input: false,
    output: {
      type: "object",
      additionalProperties: false,
      required: ["hex", "rgb"],
      properties: {
        hex: { type: "string", pattern: "^#[0-9a-f]{6}$" },
        rgb: { type: "array", items: { type: "integer", minimum: 0, maximum: 255 }, minItems: 3, maxItems: 3 },
      },
    },
    limits: { timeoutMs: 0, maxInputBytes: 0 },
    auth: { capability: "tools.tool.run", anonymous: true },
    quotaClass: "light",
    cost: 0,
    egress: false,
    hosts: [],
    docs: "services/tools/README.md#planned-mirror-and-page-tools",
  },
];
