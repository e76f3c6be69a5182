import type { ToolDescriptor } from "./descriptor.js";

const KIB = 1024;
const MIB = 1024 * KIB;

/**
 * What the job tools' code holds each run to, beside their descriptors (services/tools/README.md "File tools"):
 * the bounds against decompression bombs and runaway work live here so schema and code say the same numbers.
 */
export const IMG_LIMITS = {
  /** Decoded pixels of the input at most (sharp's limitInputPixels): a 50,000 × 50,000 header is refused unread. */
  maxInputPixels: 50_000_000,
  /** Width and height of a resize or crop at most, so the output is bounded too. */
  maxSide: 8192,
  maxFileBytes: 25 * MIB,
  timeoutMs: 30_000,
};

export const AUDIO_LIMITS = {
  /** The input's duration at most, as FFmpeg probes it. */
  maxDurationSeconds: 3600,
  /** The result file at most (FFmpeg's -fs): a longer WAV is refused rather than cut. */
  maxOutputBytes: 256 * MIB,
  maxFileBytes: 50 * MIB,
  timeoutMs: 120_000,
};

export const DOCS_LIMITS = {
  /** Pages of a PDF read at most (its first ones), whatever its page tree claims. */
  maxPages: 200,
  /** Characters of text kept at most (the text result file); past it the text is cut and `truncated` set. */
  maxTextChars: 1_000_000,
  /** Characters of the text the output itself carries (the whole text is the result file). */
  maxOutputTextChars: 20_000,
  /** A DOCX (a ZIP) holds at most this many entries, inflating to at most this many bytes in all. */
  maxZipEntries: 1000,
  maxZipBytes: 64 * MIB,
  maxFileBytes: 20 * MIB,
  timeoutMs: 60_000,
};

/** What every file tool shares: a job the run API exposes, for signed-in callers, in the `file` quota class. */
const FILE_JOB: Pick<
  ToolDescriptor,
  "execution" | "api" | "catalogue" | "auth" | "quotaClass" | "egress" | "hosts" | "docs"
> = {
  execution: "job",
  api: true,
  catalogue: "available",
  auth: { capability: "tools.tool.run", anonymous: false },
  quotaClass: "file",
  egress: false,
  hosts: [],
  docs: "services/tools/README.md#file-tools",
};

const side = (description: string) => ({ type: "integer", minimum: 1, maximum: IMG_LIMITS.maxSide, description });
const resultSize = { type: "integer", minimum: 0, description: "The result file's size in bytes." };

/** The catalogue's file tools: jobs on sharp, FFmpeg and the document libraries. */
export const filesCatalogue: readonly ToolDescriptor[] = [
  {
    ...FILE_JOB,
    id: "img.process",
    family: "img",
    name: "Process an image",
    summary:
      "Crops, resizes and converts a JPEG, PNG, WebP, AVIF, GIF or TIFF image to JPEG, PNG, WebP or AVIF, metadata stripped.",
    input: {
      type: "object",
      additionalProperties: false,
      properties: {
        crop: {
          type: "object",
          additionalProperties: false,
          required: ["left", "top", "width", "height"],
          description: "A rectangle of the image (upright, as its orientation shows it) kept before any resize.",
          properties: {
            left: { type: "integer", minimum: 0, maximum: 1_000_000 },
            top: { type: "integer", minimum: 0, maximum: 1_000_000 },
            width: side("The rectangle's width in pixels."),
            height: side("The rectangle's height in pixels."),
          },
        },
        resize: {
          type: "object",
          additionalProperties: false,
          minProperties: 1,
          description: "The size to scale to; one side alone keeps the aspect ratio.",
          properties: {
            width: side("The width in pixels."),
            height: side("The height in pixels."),
            fit: {
              enum: ["cover", "contain", "fill", "inside", "outside"],
              default: "inside",
              description: "How the image fits both sides when both are given (sharp's fit).",
            },
          },
        },
        format: {
          enum: ["jpeg", "png", "webp", "avif"],
          description: "The output format; by default the input's, or PNG for a GIF or TIFF.",
        },
        quality: { type: "integer", minimum: 1, maximum: 100, description: "JPEG, WebP and AVIF quality." },
        strip: {
          type: "boolean",
          default: true,
          description: "Leave out the metadata (EXIF with its location, ICC profile, XMP).",
        },
      },
    },
    output: {
      type: "object",
      additionalProperties: false,
      required: ["width", "height", "format", "size"],
      properties: {
        width: { type: "integer", minimum: 1 },
        height: { type: "integer", minimum: 1 },
        format: { enum: ["jpeg", "png", "webp", "avif"] },
        size: resultSize,
      },
    },
    files: {
      accept: ["image/jpeg", "image/png", "image/webp", "image/avif", "image/gif", "image/tiff"],
      maxCount: 1,
      maxBytes: IMG_LIMITS.maxFileBytes,
    },
    limits: { timeoutMs: IMG_LIMITS.timeoutMs, maxInputBytes: 4 * KIB },
    cost: 1,
  },
  {
    ...FILE_JOB,
    id: "audio.process",
    family: "audio",
    name: "Convert audio",
    summary: "Transcodes audio to MP3, Ogg Vorbis, WAV, FLAC or AAC with FFmpeg: bitrate, sample rate, channels, trim.",
    input: {
      type: "object",
      additionalProperties: false,
      required: ["format"],
      properties: {
        format: { enum: ["mp3", "ogg", "wav", "flac", "aac"], description: "The output format." },
        bitrate_kbps: {
          type: "integer",
          minimum: 32,
          maximum: 320,
          description: "The bitrate of MP3, Ogg and AAC (ignored by the lossless WAV and FLAC).",
        },
        sample_rate: { enum: [8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000], description: "In Hz." },
        channels: { enum: [1, 2], description: "Mono or stereo." },
        start_seconds: {
          type: "number",
          minimum: 0,
          maximum: AUDIO_LIMITS.maxDurationSeconds,
          description: "Trim: where the result starts in the input.",
        },
        duration_seconds: {
          type: "number",
          exclusiveMinimum: 0,
          maximum: AUDIO_LIMITS.maxDurationSeconds,
          description: "Trim: how long the result is at most.",
        },
      },
    },
    output: {
      type: "object",
      additionalProperties: false,
      required: ["duration_seconds", "format", "size"],
      properties: {
        duration_seconds: { type: "number", minimum: 0 },
        format: { enum: ["mp3", "ogg", "wav", "flac", "aac"] },
        size: resultSize,
      },
    },
    files: { accept: ["audio/*"], maxCount: 1, maxBytes: AUDIO_LIMITS.maxFileBytes },
    limits: { timeoutMs: AUDIO_LIMITS.timeoutMs, maxInputBytes: 4 * KIB },
    cost: 2,
  },
  {
    ...FILE_JOB,
    id: "docs.process",
    family: "docs",
    name: "Extract a document's text",
    summary:
      "The text of a PDF (its first pages), a DOCX or a Markdown file, and a DOCX or Markdown file as safe HTML.",
    input: {
      type: "object",
      additionalProperties: false,
      properties: {
        from: {
          enum: ["auto", "pdf", "docx", "markdown"],
          default: "auto",
          description: "The input's format; auto reads it from the file's bytes (Markdown: any other UTF-8 text).",
        },
        pages: {
          type: "integer",
          minimum: 1,
          maximum: DOCS_LIMITS.maxPages,
          default: DOCS_LIMITS.maxPages,
          description: "PDF: how many of its first pages are read.",
        },
        html: {
          type: "boolean",
          default: true,
          description: "DOCX and Markdown: also a result file of sanitised HTML.",
        },
      },
    },
    output: {
      type: "object",
      additionalProperties: false,
      required: ["format", "characters", "truncated", "text"],
      properties: {
        format: { enum: ["pdf", "docx", "markdown"] },
        pages: { type: "integer", minimum: 0, description: "PDF: the pages the document says it has." },
        pages_read: { type: "integer", minimum: 0, description: "PDF: the pages read." },
        characters: { type: "integer", minimum: 0, description: "Characters of the text result file." },
        truncated: {
          type: "boolean",
          description: `Whether the text was cut at ${DOCS_LIMITS.maxTextChars} characters or pages were left unread.`,
        },
        text: {
          type: "string",
          maxLength: DOCS_LIMITS.maxOutputTextChars,
          description: `The text's first ${DOCS_LIMITS.maxOutputTextChars} characters (the whole is result file 1).`,
        },
      },
    },
    files: {
      accept: [
        "application/pdf",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "text/markdown",
        "text/x-markdown",
        "text/plain",
      ],
      maxCount: 1,
      maxBytes: DOCS_LIMITS.maxFileBytes,
    },
    limits: { timeoutMs: DOCS_LIMITS.timeoutMs, maxInputBytes: 4 * KIB },
    cost: 1,
  },
];
