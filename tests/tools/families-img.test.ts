import { readFile } from "node:fs/promises";
import sharp from "sharp";
import { afterAll, describe, expect, it } from "vitest";
import { IMG_LIMITS } from "../../services/tools/catalogue/files.js";
import { fileTools } from "../../services/tools/families/files.js";
import { imageFormatOf } from "../../services/tools/families/img.js";
import { ToolFailure } from "../../services/tools/families/tool.js";
import { peakGrowth } from "../support/memory.js";
import { checked, pngClaiming, removeRuns, runOn } from "./fixtures/files.js";

const processImage = checked("img.process", fileTools["img.process"]);
const MIB = 1024 ** 2;

afterAll(removeRuns);

/** A 400 × 300 picture with a gradient (so a crop shows which part was kept), as this format. */
async function picture(format: "png" | "jpeg", metadata = false): Promise<Buffer> {
  const width = 400;
  const height = 300;
  const pixels = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++)
      pixels.set([Math.floor((x / width) * 255), 0, Math.floor((y / height) * 255)], (y * width + x) * 3);
  }
  const image = sharp(pixels, { raw: { width, height, channels: 3 } });
  if (metadata) image.withExif({ IFD0: { Copyright: "Someone", Artist: "A person" } });
  return image.toFormat(format).toBuffer();
}

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

describe("img.process on sharp", () => {
  it("resizes and converts a PNG; the result read back has the size and format asked for", async () => {
    const run = await runOn([{ name: "photo.png", contentType: "image/png", bytes: await picture("png") }], {
      resize: { width: 200 },
      format: "webp",
    });
    const { output, files } = await processImage(run.work);
    expect(output).toEqual({ width: 200, height: 150, format: "webp", size: expect.any(Number) as number });
    expect(files).toEqual([{ name: "image.webp", contentType: "image/webp", path: expect.any(String) as string }]);
    const bytes = await readFile(files[0].path);
    expect(output.size).toBe(bytes.length);
    const back = await sharp(bytes).metadata();
    expect([back.format, back.width, back.height]).toEqual(["webp", 200, 150]);
    expect(run.progress.map((each) => each.percent)).toEqual([0, 10, 100]);
  });

  it("crops before it resizes, keeping the part asked for", async () => {
    const run = await runOn([{ name: "photo.png", contentType: "image/png", bytes: await picture("png") }], {
      crop: { left: 300, top: 0, width: 100, height: 100 },
      resize: { width: 50, height: 50, fit: "fill" },
    });
    const { output, files } = await processImage(run.work);
    expect(output).toMatchObject({ width: 50, height: 50, format: "png" });
    // The right-hand strip of the gradient: red near its top.
    const { data } = await sharp(files[0].path).raw().toBuffer({ resolveWithObject: true });
    expect(data[0]).toBeGreaterThan(180);
  });

  it("strips metadata by default, and keeps it when strip is false", async () => {
    const bytes = await picture("jpeg", true);
    expect((await sharp(bytes).metadata()).exif).toBeDefined();
    const stripped = await processImage((await runOn([{ name: "a.jpg", contentType: "image/jpeg", bytes }])).work);
    expect((await sharp(stripped.files[0].path).metadata()).exif).toBeUndefined();
    const kept = await processImage(
      (await runOn([{ name: "a.jpg", contentType: "image/jpeg", bytes }], { strip: false })).work,
    );
    expect((await sharp(kept.files[0].path).metadata()).exif?.toString("latin1")).toContain("Someone");
    expect(kept.output.format).toBe("jpeg");
  });

  it("refuses a crop outside the image", async () => {
    const run = await runOn([{ name: "photo.png", contentType: "image/png", bytes: await picture("png") }], {
      crop: { left: 350, top: 0, width: 100, height: 100 },
    });
    const { failure } = await failureOf(processImage(run.work));
    expect(failure.code).toBe("tools.input.invalid");
    expect(failure.detail).toContain("outside the 400×300 image");
  });

  it("refuses a 50,000 × 50,000 PNG header unread: quickly, memory bounded", async () => {
    const run = await runOn([{ name: "bomb.png", contentType: "image/png", bytes: pngClaiming(50_000, 50_000) }]);
    const rssBefore = process.memoryUsage().rss;
    let outcome: { failure: ToolFailure; ms: number } | undefined;
    const growth = await peakGrowth(async () => {
      outcome = await failureOf(processImage(run.work));
    });
    expect(outcome!.failure.code).toBe("tools.file.refused");
    expect(outcome!.failure.detail).toContain("more than 50,000,000 pixels");
    expect(outcome!.ms).toBeLessThan(5_000);
    expect(growth).toBeLessThan(32 * MIB);
    // Decoded, it would be 7.5 GB of native memory: the process did not take it.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(256 * MIB);
  });

  it("takes a picture just under the pixel limit's shape but refuses one a pixel over", async () => {
    const side = Math.floor(Math.sqrt(IMG_LIMITS.maxInputPixels));
    const over = await runOn([{ name: "a.png", contentType: "image/png", bytes: pngClaiming(side + 1, side + 1) }]);
    expect((await failureOf(processImage(over.work))).failure.code).toBe("tools.file.refused");
  });

  it("fails a truncated JPEG as unreadable, never filling in the missing part", async () => {
    const whole = await picture("jpeg");
    const truncated = whole.subarray(0, Math.floor(whole.length * 0.7));
    const run = await runOn([{ name: "cut.jpg", contentType: "image/jpeg", bytes: truncated }]);
    const { failure } = await failureOf(processImage(run.work));
    expect(failure.code).toBe("tools.file.unreadable");
    expect(failure.detail).toMatch(/^The image is truncated or corrupt/);
    expect(failure.detail).not.toContain(run.root);
  });

  it("reads no file that is not one of its image formats, whatever it is called", async () => {
    const script = "#!/bin/sh\necho owned\n";
    const svg =
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><image href="file:///etc/passwd"/></svg>';
    for (const [name, bytes] of [
      ["run.png", script],
      ["drawing.svg", svg],
    ]) {
      const run = await runOn([{ name, contentType: "image/png", bytes }]);
      const { failure } = await failureOf(processImage(run.work));
      expect(failure.code).toBe("tools.file.unreadable");
      expect(failure.detail).toBe("The file is not a JPEG, PNG, WebP, GIF, TIFF or AVIF image.");
    }
  });

  it("needs exactly one input file", async () => {
    const run = await runOn([]);
    expect((await failureOf(processImage(run.work))).failure.code).toBe("tools.file.missing");
  });

  it("tells the formats by their signatures", async () => {
    expect(imageFormatOf(await picture("png"))).toBe("png");
    expect(imageFormatOf(await picture("jpeg"))).toBe("jpeg");
    const tiny = sharp({ create: { width: 4, height: 4, channels: 3, background: "#fff" } });
    expect(imageFormatOf(await tiny.clone().webp().toBuffer())).toBe("webp");
    expect(imageFormatOf(await tiny.clone().gif().toBuffer())).toBe("gif");
    expect(imageFormatOf(await tiny.clone().tiff().toBuffer())).toBe("tiff");
    expect(imageFormatOf(await tiny.clone().avif().toBuffer())).toBe("avif");
    expect(imageFormatOf(Buffer.from("\0\0\0\x18ftypheic\0\0\0\0mif1heic", "latin1"))).toBeUndefined();
    expect(imageFormatOf(Buffer.from("<svg></svg>"))).toBeUndefined();
    expect(imageFormatOf(Buffer.alloc(0))).toBeUndefined();
  });
});
