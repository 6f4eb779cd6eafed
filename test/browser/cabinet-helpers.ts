import { mkdirSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 800 };

/** Debian Chromium, headless, quiet (no background traffic). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** A screenshot writer into `dir`: each page at phone and desktop width, then back to desktop. */
export function shooter(dir: string): (p: Page, name: string) => Promise<void> {
  mkdirSync(dir, { recursive: true });
  return async (p, name) => {
    for (const [label, size] of [['phone', PHONE], ['desktop', DESKTOP]] as const) {
      await p.setViewportSize(size);
      await p.screenshot({ path: `${dir}/${name}-${label}.png`, fullPage: true });
    }
    await p.setViewportSize(DESKTOP);
  };
}
