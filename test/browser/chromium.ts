/**
 * The Chromium that browser tests drive through playwright-core. In order: `CHROMIUM_PATH`, a
 * system Chromium (Debian's `chromium`), else the headless build inside the `@sparticuz/chromium`
 * npm package, unpacked into the temporary directory on first use (~2 s, then cached). So
 * `npm ci && npm test` needs no system package and no browser download.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

const SYSTEM_CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];

/** Flags for a closed network: without the background-networking ones Chromium keeps dialling out. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

export async function chromiumExecutable(env: Record<string, string | undefined> = process.env): Promise<string> {
  if (env.CHROMIUM_PATH) return env.CHROMIUM_PATH;
  const system = SYSTEM_CHROMIUM.find((path) => existsSync(path));
  if (system) return system;
  // Not its `args`: they are for AWS Lambda (--single-process, ...) and close the browser at once here.
  const { default: packaged } = await import("@sparticuz/chromium");
  return packaged.executablePath();
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: await chromiumExecutable(), args: CHROMIUM_ARGS, headless: true });
}
