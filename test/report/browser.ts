/**
 * Headless Debian chromium for the browser test, driven by playwright-core (no browser download).
 * A missing chromium is a failure with the way to fix it, never a skipped test.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CANDIDATES = [process.env.PERKS_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(
  (p): p is string => Boolean(p),
);

export async function launchChromium(): Promise<Browser> {
  const executablePath = CANDIDATES.find((p) => existsSync(p));
  if (!executablePath) {
    throw new Error(
      `chromium not found (looked at ${CANDIDATES.join(', ')}): install it with \`apt-get update && apt-get install -y chromium\` (.ci/run does this), or set PERKS_CHROMIUM to its path`,
    );
  }
  return chromium.launch({
    executablePath,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}
