import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { DESKTOP, PHONE, launchChromium, shooter } from './cabinet-helpers.js';
import type { TestApp } from '../helpers/app.js';
import { listeningTestApp } from '../helpers/browser.js';
import { startSmtpServer, startTestMailWorker, resetLinkOf } from '../helpers/smtp.js';
import type { Worker } from '../../src/workers/index.js';
import { cabinetMerchant } from '../cabinet/helpers.js';
import { enrolledOperator, totpCode } from '../operator/helpers.js';

/**
 * A forgotten password, in real Chromium, through a real mailbox (an SMTP server the mail worker
 * delivers to): "Forgot password?" on the sign-in page, the mailed link, a new password, and a
 * sign-in with it. The cabinet in Russian on a phone, the console in English on a desktop;
 * every page is also shot at the other size.
 */
const DIR = 'test/artifacts/forgotten-passwords';
const shoot = shooter(DIR);
let t: TestApp;
let base: string;
let browser: Browser;
let worker: Worker;
let smtp: Awaited<ReturnType<typeof startSmtpServer>>;

beforeAll(async () => {
  smtp = await startSmtpServer();
  ({ t, base } = await listeningTestApp(DIR, { SMTP_URL: smtp.url, MAIL_FROM: 'Payments <no-reply@pay.test>' }));
  worker = startTestMailWorker(t);
  browser = await launchChromium();
});

afterAll(async () => {
  await worker?.stop();
  await browser?.close();
  await t?.close();
  await smtp?.close();
});

const open = async (viewport: typeof PHONE, locale: string): Promise<Page> => (await browser.newContext({ viewport, locale })).newPage();

test('cabinet (phone, Russian): Забыли пароль? -> the mailed link -> a new password -> signed in', async () => {
  const m = await cabinetMerchant(t);
  const page = await open(PHONE, 'ru-RU');
  await page.goto(`${base}/cabinet/login?lang=ru`);
  await page.getByRole('link', { name: 'Забыли пароль?' }).click();
  await page.waitForURL(`${base}/cabinet/forgot-password`);
  await page.locator('#email').fill(m.email);
  await page.getByRole('button', { name: 'Прислать ссылку' }).click();
  await expect(page.getByTestId('forgot-sent').textContent()).resolves.toContain(m.email);
  await shoot(page, 'cabinet-01-sent');
  await page.setViewportSize(PHONE);

  const mail = await smtp.waitFor((x) => x.to.includes(m.email) && /password/i.test(x.subject));
  await page.goto(resetLinkOf(mail));
  await page.locator('#password').fill('a new cabinet password 7');
  await shoot(page, 'cabinet-02-new-password');
  await page.setViewportSize(PHONE);
  await page.getByRole('button', { name: 'Задать пароль' }).click();
  await page.waitForURL(/\/cabinet\/login\?reset=1$/);
  await page.locator('#email').fill(m.email);
  await page.locator('#password').fill('a new cabinet password 7');
  await page.getByRole('button', { name: 'Войти' }).click();
  await page.waitForURL(`${base}/cabinet`);
  await shoot(page, 'cabinet-03-signed-in');
  await page.context().close();
});

test('console (desktop, English): Forgot password? -> the mailed link -> a new password -> the password and the second factor sign in', async () => {
  const op = await enrolledOperator(t, 'finance');
  const page = await open(DESKTOP, 'en-US');
  await page.goto(`${base}/operator/login`);
  await page.getByRole('link', { name: 'Forgot password?' }).click();
  await page.locator('#email').fill(op.email);
  await page.getByRole('button', { name: 'Send the link' }).click();
  await expect(page.getByTestId('forgot-sent').textContent()).resolves.toContain(op.email);
  await shoot(page, 'console-01-sent');

  const mail = await smtp.waitFor((x) => x.to.includes(op.email) && /operator console/i.test(x.subject));
  await page.goto(resetLinkOf(mail, 'operator'));
  await page.locator('#password').fill('a new console password 7');
  await shoot(page, 'console-02-new-password');
  await page.getByRole('button', { name: 'Set the password' }).click();
  await page.waitForURL(/\/operator\/login\?reset=1$/);
  await shoot(page, 'console-03-notice');
  await page.getByLabel('Email').fill(op.email);
  await page.getByLabel('Password').fill('a new console password 7');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(/\/operator\/2fa$/);
  await page.getByLabel('Code').fill(await totpCode(op.secret, 1));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${base}/operator`);
  await page.context().close();
});
