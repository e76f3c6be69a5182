import { join } from "node:path";
import sharp, { type FitEnum } from "sharp";
import { IMG_LIMITS } from "../catalogue/files.js";
import { headOf, RunStop, theInputFile } from "./job-input.js";
import { ToolFailure, type JobTool } from "./tool.js";

/** The image formats img.process reads: only these reach libvips (never SVG, PDF or a format it guesses). */
export type ImageInputFormat = "jpeg" | "png" | "webp" | "gif" | "tiff" | "avif";
/** The formats it writes. */
export type ImageOutputFormat = "jpeg" | "png" | "webp" | "avif";

const OUTPUT_FORMATS: readonly string[] = ["jpeg", "png", "webp", "avif"];

const CONTENT_TYPES: Record<ImageOutputFormat, string> = {
  jpeg: "image/jpeg",
  png: "image/png",
  webp: "image/webp",
  avif: "image/avif",
};

/** The input img.process takes (valid against its schema already). */
interface ImageInput {
  crop?: { left: number; top: number; width: number; height: number };
  resize?: { width?: number; height?: number; fit?: keyof FitEnum };
  format?: ImageOutputFormat;
  quality?: number;
  strip?: boolean;
}

/** Bytes read to tell an image's format. */
const HEAD_BYTES = 64;

/**
 * An image's format by its first bytes (its signature), or undefined for anything else: the one gate before a
 * decoder sees the file, whatever name or media type it came with.
 */
export function imageFormatOf(head: Buffer): ImageInputFormat | undefined {
  const ascii = (from: number, to: number) => head.toString("latin1", from, to);
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "jpeg";
  if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return "png";
  if (ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "webp";
  if (ascii(0, 6) === "GIF87a" || ascii(0, 6) === "GIF89a") return "gif";
  if (ascii(0, 4) === "II*\0" || ascii(0, 4) === "MM\0*") return "tiff";
  if (ascii(4, 8) === "ftyp" && head.length >= 16) {
    // An ISO-BMFF file is AVIF when its major or a compatible brand says so (HEIC, which sharp cannot read, is not).
    const boxEnd = Math.min(head.readUInt32BE(0), head.length);
    const brands = [ascii(8, 12)];
    for (let at = 16; at + 4 <= boxEnd; at += 4) brands.push(ascii(at, at + 4));
    if (brands.some((brand) => brand === "avif" || brand === "avis")) return "avif";
  }
  return undefined;
}

/**
 * img.process on sharp (libvips): crop, resize, convert, metadata stripped. The format is checked by signature
 * first; libvips then decodes with a pixel limit (a 50,000 × 50,000 header is refused before any pixel is
 * allocated), fails on truncated data rather than filling it in, and stops at the tool's time budget (libvips cannot be interrupted sooner).
 */
export const processImage: JobTool = async (work) => {
  const stop = new RunStop(work, IMG_LIMITS.timeoutMs);
  const input = work.input as ImageInput;
  const file = theInputFile(work);
  await work.progress(0, "Reading the image");
  const inputFormat = imageFormatOf(await headOf(file.path, HEAD_BYTES));
  if (inputFormat === undefined) {
    throw new ToolFailure("tools.file.unreadable", "The file is not a JPEG, PNG, WebP, GIF, TIFF or AVIF image.");
  }
  const image = sharp(file.path, {
    limitInputPixels: IMG_LIMITS.maxInputPixels,
    failOn: "truncated",
  }).timeout({ seconds: Math.ceil(IMG_LIMITS.timeoutMs / 1000) });
  const metadata = await image.metadata().catch((error: unknown) => {
    throw stop.reason ?? failureOf(error, file.path);
  });
  stop.check();
  const upright = metadata.autoOrient;
  const crop = input.crop;
  if (crop && (crop.left + crop.width > upright.width || crop.top + crop.height > upright.height)) {
    throw new ToolFailure(
      "tools.input.invalid",
      `The crop ${crop.width}×${crop.height} at ${crop.left},${crop.top} lies outside the ${upright.width}×${upright.height} image.`,
    );
  }
  await work.progress(10, "Processing the image");
  const format: ImageOutputFormat =
    input.format ?? (OUTPUT_FORMATS.includes(inputFormat) ? (inputFormat as ImageOutputFormat) : "png");
  image.autoOrient();
  if (crop) image.extract(crop);
  if (input.resize) image.resize({ ...input.resize, fit: input.resize.fit ?? "inside" });
  image.toFormat(format, input.quality === undefined ? {} : { quality: input.quality });
  if (input.strip === false) image.keepMetadata();
  const name = `image.${format === "jpeg" ? "jpg" : format}`;
  const path = join(work.workDir, name);
  const info = await image.toFile(path).catch((error: unknown) => {
    throw stop.reason ?? failureOf(error, file.path);
  });
  stop.check();
  await work.progress(100, "Done");
  return {
    output: { width: info.width, height: info.height, format, size: info.size },
    files: [{ name, contentType: CONTENT_TYPES[format], path }],
  };
};

/** What a libvips error means for the caller, in words that never show the file's path on this machine. */
function failureOf(error: unknown, path: string): ToolFailure {
  const message = error instanceof Error ? error.message : String(error);
  if (/pixel limit/i.test(message)) {
    return new ToolFailure(
      "tools.file.refused",
      `The image has more than ${IMG_LIMITS.maxInputPixels.toLocaleString("en")} pixels, the limit; it was not decoded.`,
    );
  }
  const reason = message.split("\n")[0].replaceAll(path, "the file");
  return new ToolFailure("tools.file.unreadable", `The image is truncated or corrupt (${reason}).`);
}
