import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { SignInGuard } from '../sign-in-guard.js';
import { safeNext as sharedSafeNext } from '../../lib/web-session.js';
import { writeAudit, type Actor } from '../../audit/audit.js';
import { CABINET_TOTP_ISSUER, RECOVERY_CODE_COUNT, newTotpSecret, totpQrDataUrl, totpUri } from '../../domain/operator/two-factor.js';
import { BASE, SESSION_COOKIE, render, type CabinetRouteOptions } from '../context.js';
import { formBody, queryOf } from '../../lib/form-body.js';
import { accountOf, mustEnrolTwoFactor, type CabinetSession } from '../session.js';
import type { Lang } from '../../lib/i18n.js';
import { mailTexts } from '../../mail/templates.js';

// The pages' words (kept beside the pages, as the team page does).
const WORDS: Record<Lang, Record<string, string>> = {
  en: {
    'code.title': 'Two-factor code', 'code.text': 'Enter the six-digit code from your authenticator app, or one of your recovery codes.',
    'code.label': 'Code', 'code.submit': 'Sign in', 'code.cancel': 'Cancel and sign out',
    'code.wrong': 'That code is not right (or was used already). Try the current code.',
    'code.throttled': 'Too many wrong codes. Wait a few minutes and try again.',
    title: 'Two-factor sign-in', on: 'Two-factor sign-in is on for {email}. Sign-in asks for a code from your authenticator app.',
    off: 'Two-factor sign-in is off for {email}. Turn it on so that a password alone does not open the cabinet.',
    left: 'Recovery codes left: {n}.',
    'setup.text': 'Scan this QR code with an authenticator app (or type the key), then enter the code it shows.',
    'setup.key': 'Key', 'setup.label': 'Code from the app', 'setup.submit': 'Turn on',
    'disable.title': 'Turn off', 'disable.text': 'To turn two-factor sign-in off, enter a current code from the app (or a recovery code).',
    'disable.submit': 'Turn off two-factor sign-in',
    'codes.title': 'Your recovery codes',
    'codes.text': 'Two-factor sign-in is on. Keep these ten codes somewhere safe: each signs you in once if you lose your phone. They are shown only now.',
    'codes.done': 'I have saved them, continue', disabled: 'Two-factor sign-in is off.',
    'required.enrol': 'Your team requires two-factor sign-in. Set it up to continue: the rest of the cabinet opens once it is on.',
    'required.on': 'Your team requires two-factor sign-in for everyone.',
    'required.no_disable': 'Your team requires two-factor sign-in, so it cannot be turned off. The owner can switch the requirement off on the Team page.',
    signout: 'Sign out',
  },
  ru: {
    'code.title': 'Код подтверждения', 'code.text': 'Введите шестизначный код из приложения-аутентификатора или один из резервных кодов.',
    'code.label': 'Код', 'code.submit': 'Войти', 'code.cancel': 'Отменить и выйти',
    'code.wrong': 'Код неверен (или уже использован). Введите текущий код.',
    'code.throttled': 'Слишком много неверных кодов. Подождите несколько минут и попробуйте снова.',
    title: 'Двухфакторный вход', on: 'Двухфакторный вход включён для {email}. При входе спрашивается код из приложения-аутентификатора.',
    off: 'Двухфакторный вход выключен для {email}. Включите его, чтобы один пароль не открывал кабинет.',
    left: 'Осталось резервных кодов: {n}.',
    'setup.text': 'Отсканируйте QR-код приложением-аутентификатором (или введите ключ) и введите код, который оно покажет.',
    'setup.key': 'Ключ', 'setup.label': 'Код из приложения', 'setup.submit': 'Включить',
    'disable.title': 'Выключить', 'disable.text': 'Чтобы выключить двухфакторный вход, введите текущий код из приложения (или резервный код).',
    'disable.submit': 'Выключить двухфакторный вход',
    'codes.title': 'Ваши резервные коды',
    'codes.text': 'Двухфакторный вход включён. Сохраните эти десять кодов в надёжном месте: каждый один раз заменяет код из телефона. Они показаны только сейчас.',
    'codes.done': 'Я сохранил их, продолжить', disabled: 'Двухфакторный вход выключен.',
    'required.enrol': 'В вашей команде обязателен двухфакторный вход. Настройте его, чтобы продолжить: остальной кабинет откроется, когда он будет включён.',
    'required.on': 'В вашей команде двухфакторный вход обязателен для всех.',
    'required.no_disable': 'В вашей команде двухфакторный вход обязателен, поэтому его нельзя выключить. Владелец может отменить требование на странице «Команда».',
    signout: 'Выйти',
  },
};
const words = (lang: Lang) => (k: string, vars: Record<string, string | number> = {}) =>
  (WORDS[lang][k] ?? k).replace(/\{(\w+)\}/g, (_, v: string) => String(vars[v] ?? ''));

const secondFactor = { cabinetSecondFactor: true } as const;

/**
 * Optional TOTP 2FA of cabinet accounts, with the console's implementation
 * (src/domain/operator/two-factor.ts): each account (the merchant's own login, each team
 * member) turns it on here with a code, gets recovery codes once, and from then on a right
 * password opens only the code page. Wrong codes are limited per account as wrong passwords
 * are (SignInGuard); turning it off takes a current code. Every step is in the audit trail,
 * without a secret or a code.
 */
export default async function twoFactorRoutes(app: FastifyInstance, opts: CabinetRouteOptions): Promise<void> {
  const { sessions, cookieOpts } = opts;
  const codeGuard = new SignInGuard(app.services.limits, 'cabinet-code', { ...opts.signInLimits, perPair: 5, perAccount: 20 });
  const factors = app.services.cabinetTwoFactor;
  const safeNext = (next: string | undefined) => sharedSafeNext(next, BASE);

  const who = (req: FastifyRequest, s: CabinetSession): Actor =>
    ({ actor: s.user ? `merchant-user:${s.user.id}` : `merchant:${s.merchant.id}`, name: accountOf(s).email, ip: req.ip ?? null });
  const objectOf = (s: CabinetSession) => ({ objectType: s.user ? 'merchant_user' : 'merchant', objectId: accountOf(s).id });
  const w = (req: FastifyRequest) => words(req.cabinet.lang);
  // Changes of an account's second factor are mailed to that account.
  const mailAccount = (s: CabinetSession) => ({ merchantId: s.merchant.id, userId: s.user?.id ?? null });

  const codePage = (req: FastifyRequest, reply: FastifyReply, data: Record<string, unknown> = {}) =>
    render(req, reply, 'two-factor-code', { title: w(req)('code.title'), w: w(req), next: safeNext(queryOf(req).next ?? formBody(req).next), ...data });

  app.get('/2fa', { config: secondFactor, schema: { hide: true } }, async (req, reply) => codePage(req, reply));

  app.post('/2fa', { config: secondFactor, schema: { hide: true } }, async (req, reply) => {
    const s = req.cabinet.session!;
    const account = accountOf(s);
    const ticket = await codeGuard.admit(account.id, req.ip);
    if (!ticket) { reply.status(429); return codePage(req, reply, { error: w(req)('code.throttled') }); }
    const factor = await factors[account.table].check(account.id, formBody(req).code ?? '', (c, r) => writeAudit(c, who(req, s), {
      action: 'merchant.sign_in', ...objectOf(s), before: null,
      after: r.factor === 'recovery_code' ? { factor: r.factor, codes_left: r.codesLeft } : { factor: r.factor },
    }));
    if (!factor) {
      await app.services.audit.record(who(req, s), { action: 'merchant.sign_in.failed', ...objectOf(s), before: null, after: { step: 'totp' } });
      reply.status(401);
      return codePage(req, reply, { error: w(req)('code.wrong') });
    }
    await codeGuard.succeeded(ticket);
    reply.setCookie(SESSION_COOKIE, await sessions.promote(s), cookieOpts);
    return reply.redirect(safeNext(formBody(req).next), 303);
  });

  app.post('/2fa/cancel', { config: secondFactor, schema: { hide: true } }, async (req, reply) => {
    await sessions.destroy(req.cabinet.session!.id);
    reply.clearCookie(SESSION_COOKIE, { path: BASE });
    return reply.redirect(`${BASE}/login?bye=1`, 303);
  });

  const securityPage = async (req: FastifyRequest, reply: FastifyReply, data: Record<string, unknown> = {}) => {
    const s = req.cabinet.session!;
    const account = accountOf(s);
    const base = {
      nav: 'security', title: w(req)('title'), w: w(req), email: account.email, on: s.totpEnabled,
      // The team requires 2FA: said on the page; without it yet, the page is all this account reaches.
      required: s.merchant.requireTwoFactor, mustEnrol: mustEnrolTwoFactor(s), ...data,
    };
    if (s.totpEnabled) return render(req, reply, 'security', { ...base, left: await factors[account.table].recoveryCodesLeft(account.id) });
    // One secret per session until a code confirms it, kept encrypted with the session.
    let secret: string;
    if (s.pendingTotpEnc) secret = factors[account.table].openSecret(s.pendingTotpEnc);
    else {
      secret = newTotpSecret();
      await sessions.setPendingTotp(s.id, factors[account.table].sealSecret(secret));
    }
    const uri = totpUri(account.email, secret, CABINET_TOTP_ISSUER);
    return render(req, reply, 'security', { ...base, secret, qr: await totpQrDataUrl(uri) });
  };

  const enrolment = { cabinetEnrolment: true } as const;
  app.get('/security', { config: enrolment, schema: { hide: true } }, async (req, reply) => securityPage(req, reply));

  // A reload of the recovery codes (a replay of this form) lands on the security page, which says
  // two-factor sign-in is on and that the codes were shown once, never an error page.
  const enable = { ...enrolment, cabinetReplayTo: { path: '/security', ok: 'security.codes_shown_once' } } as const;
  app.post('/security/totp/enable', { config: enable, schema: { hide: true } }, async (req, reply) => {
    const s = req.cabinet.session!;
    if (s.totpEnabled || !s.pendingTotpEnc) return reply.redirect(`${BASE}/security`, 303);
    const account = accountOf(s);
    const ticket = await codeGuard.admit(account.id, req.ip);
    if (!ticket) { reply.status(429); return securityPage(req, reply, { error: w(req)('code.throttled') }); }
    const tf = factors[account.table];
    const r = await tf.enable(account.id, tf.openSecret(s.pendingTotpEnc), formBody(req).code ?? '', async (c) => {
      await writeAudit(c, who(req, s), { action: 'merchant.totp.enable', ...objectOf(s), before: { totp_enabled: false }, after: { totp_enabled: true, codes_issued: RECOVERY_CODE_COUNT } });
      // Whoever was signed in with the password alone is signed out; this browser stays.
      await sessions.endOthers(c, s);
      await app.services.mail.enqueueToAccount(c, mailAccount(s), 'two_factor_on', mailTexts.twoFactorOn());
    });
    if (!r) { reply.status(401); return securityPage(req, reply, { error: w(req)('code.wrong') }); }
    await codeGuard.succeeded(ticket);
    await sessions.setPendingTotp(s.id, null);
    // Shown once, in the answer to this POST (a reload is a replayed form: the security page).
    return render(req, reply, 'recovery-codes', { nav: 'security', title: w(req)('codes.title'), w: w(req), codes: r.recoveryCodes });
  });

  app.post('/security/totp/disable', { schema: { hide: true } }, async (req, reply) => {
    const s = req.cabinet.session!;
    if (!s.totpEnabled) return reply.redirect(`${BASE}/security`, 303);
    // While the owner requires 2FA for everyone it cannot be turned off (the owner switches the requirement off first).
    if (s.merchant.requireTwoFactor) { reply.status(403); return securityPage(req, reply, { disableError: w(req)('required.no_disable') }); }
    const account = accountOf(s);
    const ticket = await codeGuard.admit(account.id, req.ip);
    if (!ticket) { reply.status(429); return securityPage(req, reply, { disableError: w(req)('code.throttled') }); }
    const factor = await factors[account.table].disable(account.id, formBody(req).code ?? '', async (c, r) => {
      await writeAudit(c, who(req, s), {
        action: 'merchant.totp.disable', ...objectOf(s), before: { totp_enabled: true }, after: { totp_enabled: false, factor: r.factor },
      });
      await app.services.mail.enqueueToAccount(c, mailAccount(s), 'two_factor_off', mailTexts.twoFactorOff());
    });
    if (!factor) {
      await app.services.audit.record(who(req, s), { action: 'merchant.totp.disable.failed', ...objectOf(s), before: null, after: null });
      reply.status(401);
      return securityPage(req, reply, { disableError: w(req)('code.wrong') });
    }
    await codeGuard.succeeded(ticket);
    return reply.redirect(`${BASE}/security?ok=common.saved`, 303);
  });
}
