import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { TestApp } from '../helpers/app.js';
import { browserTestApp } from '../helpers/browser.js';
import { OP_PASSWORD, createOperator, totpCode } from '../operator/helpers.js';
import { YooKassaEmulator } from '../emulators/yookassa.js';

/**
 * Issue 30 item 3, done when: a new operator, following only the console, onboards a merchant
 * who then takes a payment through a connector configured in the console. The operator creates
 * the merchant with its owner and first shop, reads the invitation in the dev mailbox, sets up a
 * YooKassa connector (tested against the emulator's GET /me) and a sandbox connector, routes the
 * merchant's card payments to the latter; the owner accepts the invitation, bills in the
 * cabinet, and the payer pays on the hosted page: the payment went through that connector.
 */
const ARTIFACTS = 'test/artifacts/operator-onboarding';
const SIZES = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

let t: TestApp;
let base: string;
let browser: Browser;
let yk: YooKassaEmulator;

beforeAll(async () => {
  ({ t, base, browser } = await browserTestApp(ARTIFACTS));
  yk = await YooKassaEmulator.start({ shopId: '700200', secretKey: 'test_browserSecret_42' });
});

afterAll(async () => {
  await browser?.close();
  await yk?.stop();
  await t?.close();
});

const shot = (p: Page, size: string, name: string) => p.screenshot({ path: `${ARTIFACTS}/${size}-${name}.png`, fullPage: true });

/** Phone: the menu is a <details>; its links are reached by URL-less clicks through it. */
async function menu(page: Page, name: string) {
  const link = page.getByRole('navigation', { name: 'Menu' }).getByRole('link', { name, exact: true });
  if (!(await link.isVisible())) await page.locator('details.menu > summary').click();
  await link.click();
}

for (const [size, viewport] of Object.entries(SIZES)) {
  /** What the operator's steps hand on: the signed-in console, the invitation link and the merchant it made. */
  const onboarded: { page?: Page; link?: string; merchantId?: string } = {};
  const owner = `owner-${size}@flowers.test`;
  const ykName = `yk-${size}`;
  const sbxName = `sbx-${size}`;
  /** The operator's console, signed in by the first step; each later step needs the one before. */
  const consolePage = () => {
    expect(onboarded.page, 'the console signed in by the step before').toBeDefined();
    return onboarded.page!;
  };
  afterAll(async () => { await onboarded.page?.context().close(); });

  test(`${size}: an operator signs in for the first time and creates a merchant with its owner and shop; the owner's invitation is in the dev mailbox`, async () => {
    const op = await createOperator(t, 'admin');
    const ctx = await browser.newContext({ viewport, locale: 'en-US' });
    const page = await ctx.newPage();
    page.on('dialog', (d) => { void d.accept(); });
    onboarded.page = page;
    // Sign in (first sign-in: password, TOTP enrolment, recovery codes).
    await page.goto(`${base}/operator/login`);
    await page.getByLabel('Email').fill(op.email);
    await page.getByLabel('Password').fill(OP_PASSWORD);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(/\/operator\/2fa$/);
    const secret = (await page.locator('#totp-secret').textContent())!.trim();
    await page.getByLabel('Code from the app').fill(await totpCode(secret));
    await page.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('link', { name: 'I have saved them, continue' }).click();

    // New merchant: a refused form first (the owner's address is not one), then the right one.
    await menu(page, 'Merchants');
    await page.getByRole('link', { name: 'New merchant' }).click();
    await page.getByLabel('Name', { exact: true }).fill(`Flowers ${size}`);
    await page.getByLabel('Contact email').fill(`contact-${size}@flowers.test`);
    await page.getByLabel('Owner\'s email').fill(`owner-at-flowers.test`);
    await page.getByLabel('Shop name').fill(`Flowers shop ${size}`);
    await page.getByRole('button', { name: 'Create merchant' }).click();
    await expect(page.locator('#f-owner_email-error').textContent()).resolves.toContain('Must be an email address.');
    await shot(page, size, '01-new-merchant-refused');
    await page.getByLabel('Owner\'s email').fill(owner);
    await page.getByRole('button', { name: 'Create merchant' }).click();
    await page.getByRole('heading', { name: `Merchant created: Flowers ${size}` }).waitFor();
    await expect(page.locator('#onboarded-steps').textContent()).resolves.toContain(`Invitation mailed to ${owner}`);
    await shot(page, size, '02-merchant-created');
    const merchantId = (await page.locator('#onboarded-steps code').first().textContent())!;

    // The owner's invitation, in the dev mailbox.
    await menu(page, 'Mailbox');
    const mail = page.getByTestId('mail').filter({ has: page.getByTestId('mail-to').getByText(owner, { exact: true }) });
    const text = (await mail.getByTestId('mail-text').textContent())!;
    const link = /(http\S+\/cabinet\/team\/invite\/[\w-]+)/.exec(text)?.[1];
    expect(link).toBeDefined();
    await shot(page, size, '03-mailbox');
    Object.assign(onboarded, { link, merchantId });
  });

  test(`${size}: the operator sets up a YooKassa connector (its secret never shown, the connection tested) and a sandbox one in the console`, async () => {
    const page = consolePage();

    // A YooKassa connector against the emulator: created, its secret shown only as "set", the connection tested.
    await menu(page, 'Connectors');
    await page.getByRole('link', { name: 'New connector' }).click();
    await page.getByRole('link', { name: 'yookassa' }).click();
    await page.getByLabel('Name', { exact: true }).fill(ykName);
    await page.locator('#f-settings-shop_id').fill('700200');
    await page.locator('#f-settings-secret_key').fill('test_browserSecret_42');
    await page.locator('#f-settings-base_url').fill(yk.apiUrl);
    await shot(page, size, '04-yookassa-form');
    await page.getByRole('button', { name: 'Create connector' }).click();
    await page.waitForURL(new RegExp(`/operator/connectors/${ykName}\\?ok=`));
    await expect(page.getByTestId('setting-secret_key').textContent()).resolves.toBe('set');
    await expect(page.content()).resolves.not.toContain('test_browserSecret_42');
    await page.getByRole('button', { name: 'Test connection' }).click();
    await expect(page.locator('#check-result').textContent()).resolves.toMatch(/Connection works\. YooKassa accepted the shop's credentials \(account 700200, a test shop\)/);
    await shot(page, size, '05-yookassa-tested');

    // The connector the payment will go through: a sandbox one, made here.
    await menu(page, 'Connectors');
    await page.getByRole('link', { name: 'New connector' }).click();
    await page.getByRole('link', { name: 'sandbox' }).click();
    await page.getByLabel('Name', { exact: true }).fill(sbxName);
    await page.getByRole('button', { name: 'Create connector' }).click();
    await page.waitForURL(new RegExp(`/operator/connectors/${sbxName}\\?ok=`));
    await page.getByRole('button', { name: 'Test connection' }).click();
    await expect(page.locator('#check-result').textContent()).resolves.toContain('Connection works. The sandbox answers.');
  });

  test(`${size}: the operator routes the merchant's card payments to the sandbox connector (a refused choice first); every step is on the audit page`, async () => {
    const page = consolePage();

    // Routing: the merchant's card payments through the new sandbox connector. A refused choice first.
    await menu(page, 'Merchants');
    await page.getByRole('link', { name: `Flowers ${size}` }).click();
    await page.getByRole('link', { name: 'Owners, shops and routing' }).click();
    await expect(page.getByTestId('member').textContent()).resolves.toContain(owner);
    await page.locator('#f-payout_card-0').selectOption(ykName);
    await page.getByRole('button', { name: 'Save routing' }).click();
    await expect(page.locator('#route-payout_card-note').textContent()).resolves.toContain(`Connector ${ykName} (yookassa) cannot take payout_card`);
    await shot(page, size, '06-routing-refused');
    await page.locator('#f-payout_card-0').selectOption('');
    await page.locator('#f-payment_card-0').selectOption(sbxName);
    await page.getByRole('button', { name: 'Save routing' }).click();
    await expect(page.getByText('Routing saved.').isVisible()).resolves.toBe(true);
    await expect(page.locator('#route-payment_card-note').textContent()).resolves.toContain(`Now: ${sbxName}.`);
    await page.locator('#routing').scrollIntoViewIfNeeded();
    await shot(page, size, '07-routing-saved');

    // Every step on the audit page.
    await menu(page, 'Audit trail');
    const auditText = await page.locator('main').textContent();
    for (const a of ['merchant.create', 'merchant_user.invite', 'shop.create', 'connector.create', 'connector.test', 'merchant.update']) expect(auditText).toContain(a);
    await shot(page, size, '08-audit');
  });

  test(`${size}: the onboarded merchant's owner accepts the invitation and bills in the cabinet; a payer pays through the console's connector`, async () => {
    const { link, merchantId } = onboarded;
    expect(link, 'the operator\'s walk (the test before) mailed an invitation').toBeDefined();
    // The owner: the invitation link, a password, the cabinet; a bill from the first shop.
    const oc = await browser.newContext({ viewport, locale: 'en-US' });
    const mp = await oc.newPage();
    try {
      await mp.goto(link!);
      await mp.getByLabel('Password').fill('owner chosen password 1');
      await shot(mp, size, '09-invitation');
      await mp.getByRole('button', { name: 'Save and sign in' }).click();
      await mp.waitForURL(`${base}/cabinet`);
      // Shops are made in the cabinet too (the owner's).
      await mp.goto(`${base}/cabinet/shops`);
      await mp.getByRole('link', { name: 'New shop' }).click();
      await mp.getByLabel('Shop name').fill(`Second shop ${size}`);
      await mp.getByLabel('Default currency').selectOption('EUR');
      await shot(mp, size, '10-cabinet-new-shop');
      await mp.getByRole('button', { name: 'Create shop' }).click();
      await mp.waitForURL(/\/cabinet\/shops\/[A-Za-z0-9]+\?ok=common\.saved$/);
      await mp.goto(`${base}/cabinet/shops`);
      await expect(mp.locator('main').textContent()).resolves.toContain(`Second shop ${size}`);
      await shot(mp, size, '11-cabinet-shops');
      await mp.goto(`${base}/cabinet/bills/new`);
      await mp.locator('#shop_id').selectOption({ label: `Flowers shop ${size} (RUB)` });
      await expect(mp.locator('select#shop_id, select[name="shop_id"]').textContent()).resolves.toContain(`Flowers shop ${size}`);
      await mp.getByLabel('Amount').fill('250.00');
      await mp.getByLabel('Order ID').fill(`order-${size}`);
      await mp.getByRole('button', { name: 'Create' }).click();
      await mp.waitForURL(/\/cabinet\/bills\/[A-Za-z0-9]+\?ok=bills\.created$/);
      const payUrl = await mp.locator('#link-page').inputValue();
      await shot(mp, size, '12-bill');

      // The payer pays on the hosted page.
      const payer = await oc.newPage();
      await payer.goto(payUrl);
      await payer.locator('#card_number').fill('4242424242424242');
      await payer.locator('#card_expiry').fill('12/34');
      await payer.locator('#card_cvc').fill('123');
      await payer.getByTestId('pay-card').click();
      await payer.getByTestId('receipt').waitFor();
      expect(await payer.getByTestId('receipt').getAttribute('data-status')).toBe('SUCCESS');
      await shot(payer, size, '13-paid');
      const billId = payUrl.split('/').pop()!;
      const paid = await t.db.pool.query<{ connector: string; status: string; merchant_id: string }>(
        'SELECT p.connector, p.status::text AS status, b.merchant_id FROM payments p JOIN bills b ON b.id = p.bill_id WHERE p.bill_id = $1', [billId]);
      expect(paid.rows).toEqual([{ connector: sbxName, status: 'SUCCESS', merchant_id: merchantId }]);
      await mp.reload();
      await expect(mp.getByTestId('bill-status').textContent()).resolves.toBe('Success');
    } finally {
      await oc.close();
    }
  });
}
