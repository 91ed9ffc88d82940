/**
 * Debian's headless Chromium for the page tests (codec server in Temporal's Web UI, the
 * session page, the Web UI's session page with search attributes), driven by playwright-core,
 * and the folder their screenshots go to (git ignores test-artifacts/).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Chromium flags that work in a container without a display, GPU or network. */
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Fail with the install command when the machine has no Chromium. */
export function requireChromium(): void {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `No Chromium at ${chromiumPath}: apt-get install -y chromium, or set CHROMIUM_PATH`,
    );
  }
}

/** Headless Chromium with {@link CHROMIUM_FLAGS}. */
export function launchChromium(): Promise<Browser> {
  requireChromium();
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: CHROMIUM_FLAGS });
}

/** `test-artifacts/<name>/` of the repository, created. */
export function artifactsDir(name: string): string {
  const dir = join(fileURLToPath(new URL('../../', import.meta.url)), 'test-artifacts', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}
