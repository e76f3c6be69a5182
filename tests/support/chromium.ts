import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import { need } from "./skips.js";

/** Debian's chromium (CI installs it: .ci/run); under CI=true a missing one fails the tests that need it. */
const CHROMIUM = "/usr/bin/chromium";
export const BROWSER = need(existsSync(CHROMIUM), `no chromium at ${CHROMIUM}`);
/** The machine's network is closed: without these, chromium reaches for Google's hosts by itself. */
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A headless chromium as the browser tests drive it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
}
