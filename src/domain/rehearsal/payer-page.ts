import type { Browser, Page } from 'playwright-core';

/** Debian's Chromium (the browser tests use the same). */
export const CHROMIUM_PATH = '/usr/bin/chromium';
const PAGE_TIMEOUT_MS = 30_000;

/**
 * The payer of a rehearsal: headless Chromium on the provider's own page, started on first use
 * and closed with close(). The pages are the providers' hosted forms: the card field `#card`, the
 * pay button `#pay`, the bank's 3-D Secure confirmation `#confirm`, SBP's `#sbp` or `#confirm`
 * (the emulators' pages; a provider whose page names them otherwise fails the step with what the
 * page showed). The way back (`returnUrl`) is answered in the browser itself, so the payer's
 * return does not depend on this deployment being reachable from where it runs.
 */
export class PayerBrowser {
  private browser: Browser | null = null;

  constructor(private readonly returnUrl: string) {}

  private async page(): Promise<Page> {
    if (!this.browser) {
      const { chromium } = await import('playwright-core');
      this.browser = await chromium.launch({
        executablePath: CHROMIUM_PATH, headless: true,
        args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      });
    }
    const page = await (await this.browser.newContext()).newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    await page.route(`${this.returnUrl}**`, (r) => r.fulfill({ status: 200, contentType: 'text/html', body: '<p id="returned">returned</p>' }));
    return page;
  }

  /** Pays on the card form at `url` with `card`, confirms 3-D Secure when the bank asks; answers the pages passed through. */
  async payByCard(url: string, card: string): Promise<{ pages: string[] }> {
    return this.walk(url, async (page) => {
      await page.fill('#card', card);
      await page.click('#pay');
      await page.waitForLoadState();
      if (!page.url().startsWith(this.returnUrl) && await page.locator('#confirm').count() > 0) await page.click('#confirm');
    });
  }

  /** Confirms an SBP payment on the provider's page (its test stand-in for the bank app). */
  async confirmSbp(url: string): Promise<{ pages: string[] }> {
    return this.walk(url, async (page) => {
      await page.locator('#sbp, #confirm').first().click();
    });
  }

  private async walk(url: string, act: (page: Page) => Promise<void>): Promise<{ pages: string[] }> {
    const page = await this.page();
    const pages: string[] = [];
    page.on('framenavigated', (f) => { if (f === page.mainFrame()) pages.push(pathOf(f.url())); });
    try {
      await page.goto(url);
      await act(page);
      await page.waitForURL((u) => u.href.startsWith(this.returnUrl));
      return { pages };
    } catch (e) {
      const text = (await page.locator('body').innerText().catch(() => '')).replace(/\s+/g, ' ').slice(0, 200);
      throw new Error(`the payer's page did not lead back (${(e as Error).message.split('\n')[0]}); the page showed: ${text}`);
    } finally {
      await page.context().close();
    }
  }

  async close(): Promise<void> {
    await this.browser?.close();
    this.browser = null;
  }
}

/** A page's address without its query (which may carry a payment's token). */
function pathOf(u: string): string {
  try { const x = new URL(u); return `${x.origin}${x.pathname}`; } catch { return u.slice(0, 100); }
}
