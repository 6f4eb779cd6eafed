import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../../lib/crypto.js';
import { newFormSecret } from '../../lib/web-session.js';
import { timeZoneNames } from '../../lib/time.js';
import { writeAudit, changed } from '../../audit/audit.js';
import { apiKeyAudit } from '../../domain/audit-steps.js';
import { INVITE_DAYS, LastOwnerError, MIN_PASSWORD, type TeamMember } from '../../domain/merchant/team.service.js';
import { teamInviteMail } from '../../mail/team-invite.js';
import { BASE, LOGIN_CSRF_COOKIE, MODE_COOKIE, SESSION_COOKIE, cabinetActor, formErrors, liveMerchantIdOf, render, type CabinetRouteOptions } from '../context.js';
import { formBody } from '../../lib/form-body.js';
import { TEAM_ROLES } from '../roles.js';
import type { Lang } from '../../lib/i18n.js';

// The team page's words (kept here, beside the page, rather than in the shared dictionary).
const WORDS: Record<Lang, Record<string, string>> = {
  en: {
    title: 'Team', invite: 'Invite', email: 'Email', role: 'Role', state: 'State', invited: 'invited', active: 'active',
    remove: 'Remove', change: 'Change role', none: 'No team members yet. The merchant login itself is the owner.',
    link: 'This link was mailed to {email} (you may also pass it on yourself). It works once, for 7 days, and is shown only now:',
    'role.owner': 'Owner: everything, the live API token included', 'role.developer': 'Developer: API page, test token, restricted keys without refunds or payouts, webhooks, shop settings',
    'role.accountant': 'Accountant: read and export', 'role.support': 'Support: read and refunds',
    'accept.title': 'Set your password', 'accept.text': 'You were invited to the merchant cabinet as {email}. Choose a password of at least {n} characters.',
    'accept.password': 'Password', 'accept.submit': 'Save and sign in', 'accept.gone': 'This invitation link is not valid any more (used or expired). Ask the owner for a new one.',
    done: 'Done.', two_factor: 'Two-factor', on: 'on', off: 'off',
    last_owner: 'This is the only owner of the merchant: it cannot be removed or given another role, or nobody could manage the team, the live token and the payouts. Invite another owner first.',
    'tz.title': 'Time zone', 'tz.label': 'Times are shown in', 'tz.default': 'The service default ({tz})',
    'tz.text': 'Every page of the cabinet, its CSV exports, date filters and your payers\' receipts use this time zone. The API keeps the service\'s.',
    'require.title': 'Two-factor sign-in for everyone',
    'require.label': 'Require two-factor authentication for everyone',
    'require.text': 'While this is on, everyone (you included) who signs in without two-factor sign-in is sent to set it up and can open nothing else until it is on.',
    'require.save': 'Save',
    'require.own_first': 'Turn on your own two-factor sign-in first (Security page), then require it for everyone.',
  },
  ru: {
    title: 'Команда', invite: 'Пригласить', email: 'Email', role: 'Роль', state: 'Состояние', invited: 'приглашён', active: 'активен',
    remove: 'Удалить', change: 'Сменить роль', none: 'В команде пока никого. Основной вход мерчанта — владелец.',
    link: 'Эта ссылка отправлена на {email} (можно передать её и самому). Она действует один раз, 7 дней, и показана только сейчас:',
    'role.owner': 'Владелец: всё, включая боевой API-токен', 'role.developer': 'Разработчик: API, тестовый токен, ограниченные ключи без возвратов и выплат, вебхуки, настройки магазинов',
    'role.accountant': 'Бухгалтер: просмотр и выгрузки', 'role.support': 'Поддержка: просмотр и возвраты',
    'accept.title': 'Задайте пароль', 'accept.text': 'Вас пригласили в кабинет мерчанта как {email}. Придумайте пароль не короче {n} символов.',
    'accept.password': 'Пароль', 'accept.submit': 'Сохранить и войти', 'accept.gone': 'Ссылка-приглашение больше не действует (использована или истекла). Попросите владельца прислать новую.',
    done: 'Готово.', two_factor: 'Двухфакторный вход', on: 'вкл.', off: 'выкл.',
    last_owner: 'Это единственный владелец мерчанта: его нельзя удалить или сменить ему роль, иначе управлять командой, боевым токеном и выплатами будет некому. Сначала пригласите другого владельца.',
    'tz.title': 'Часовой пояс', 'tz.label': 'Время показывается в поясе', 'tz.default': 'По умолчанию сервиса ({tz})',
    'tz.text': 'Этот пояс используют все страницы кабинета, выгрузки CSV, фильтры по датам и квитанции ваших плательщиков. API остаётся в поясе сервиса.',
    'require.title': 'Двухфакторный вход для всех',
    'require.label': 'Требовать двухфакторную аутентификацию от всех',
    'require.text': 'Пока это включено, каждый (и вы тоже), кто входит без двухфакторного входа, попадает на его настройку и не может открыть ничего другого, пока не включит его.',
    'require.save': 'Сохранить',
    'require.own_first': 'Сначала включите свой двухфакторный вход (страница «Безопасность»), затем требуйте его от всех.',
  },
};
const words = (lang: Lang) => (k: string, vars: Record<string, string | number> = {}) =>
  (WORDS[lang][k] ?? k).replace(/\{(\w+)\}/g, (_, v: string) => String(vars[v] ?? ''));

const memberAudit = (m: TeamMember) => ({ email: m.email, role: m.role, state: m.state });

/**
 * The team page (owner only, src/cabinet/roles.ts): invite by email with a role, change a
 * role, remove; and the public invitation page where the invitee sets a password. Every
 * change is audited with the cabinet actor.
 */
export default async function teamRoutes(app: FastifyInstance, opts: CabinetRouteOptions): Promise<void> {
  const { team } = app.services;
  const inviteLink = (token: string) => `${app.config.publicBaseUrl}${BASE}/team/invite/${token}`;

  const page = async (req: FastifyRequest, reply: FastifyReply, data: Record<string, unknown> = {}) => {
    const s = req.cabinet.session!;
    return render(req, reply, 'team', {
      nav: 'team', members: await team.list(liveMerchantIdOf(req)), soleOwner: await team.soleOwner(liveMerchantIdOf(req)), roles: TEAM_ROLES, w: words(req.cabinet.lang),
      requireTwoFactor: s.merchant.requireTwoFactor, timeZone: s.merchant.timeZone, timeZones: timeZoneNames(), defaultTz: app.config.tz, ...data,
    });
  };

  app.get('/', { schema: { hide: true } }, async (req, reply) => page(req, reply));

  app.post('/', { schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    const who = cabinetActor(req);
    try {
      const { member, token } = await team.invite(liveMerchantIdOf(req), { email: b.email ?? '', role: b.role ?? '' }, async (c, m) => {
        await writeAudit(c, who, {
          action: 'merchant_user.invite', objectType: 'merchant_user', objectId: m.id, before: null, after: { ...memberAudit(m), merchant_id: liveMerchantIdOf(req) },
        });
        // Mailed to the invitee in the same transaction, so no invitation exists without its mail.
        await app.services.mail.enqueue(c, { merchantId: liveMerchantIdOf(req), kind: 'team_invite', to: m.email, ...(await teamInviteMail(c, liveMerchantIdOf(req), inviteLink(m.token), m.role, INVITE_DAYS)) });
      });
      // The link is also shown once, in the answer to this POST (as a new API token is).
      return page(req, reply, { invited: { email: member.email, link: inviteLink(token) } });
    } catch (e) {
      reply.status(422);
      return page(req, reply, { errors: formErrors(req, e), values: b });
    }
  });

  // The owner's "Require two-factor authentication for everyone" (owner only: src/cabinet/roles.ts),
  // enforced on every cabinet request (src/cabinet/index.ts). Audited both ways.
  app.post('/two-factor', { schema: { hide: true } }, async (req, reply) => {
    const s = req.cabinet.session!;
    const w = words(req.cabinet.lang);
    // A checkbox: sent as "true" when ticked, absent when not.
    const raw = formBody(req).required ?? 'false';
    if (raw !== 'true' && raw !== 'false') { reply.status(422); return page(req, reply, { errors: { top: req.cabinet.t('common.fix'), fields: { required: req.cabinet.t('error.general') } } }); }
    const required = raw === 'true';
    // Whoever requires it has it: switching it on cannot lock its own author out of the page they are on.
    if (required && !s.totpEnabled) { reply.status(422); return page(req, reply, { errors: { top: w('require.own_first'), fields: {} } }); }
    const who = cabinetActor(req);
    await app.services.merchants.setTwoFactorRequired(liveMerchantIdOf(req), required, (c, r) => writeAudit(c, who, {
      action: 'merchant.two_factor.require', objectType: 'merchant', objectId: r.after.id,
      before: { require_two_factor: r.before!.requireTwoFactor }, after: { require_two_factor: r.after.requireTwoFactor },
    }));
    return reply.redirect(`${BASE}/team?ok=common.saved`, 303);
  });

  // The merchant's time zone (owner only: src/cabinet/roles.ts): every face of this merchant
  // writes times in it (docs/adr/0067-money-and-time-as-people-read-them.md). Audited.
  app.post('/time-zone', { schema: { hide: true } }, async (req, reply) => {
    const who = cabinetActor(req);
    try {
      await app.services.merchants.setTimeZone(liveMerchantIdOf(req), formBody(req).time_zone ?? null, (c, r) => writeAudit(c, who, {
        action: 'merchant.time_zone', objectType: 'merchant', objectId: r.after.id,
        before: { time_zone: r.before!.timeZone }, after: { time_zone: r.after.timeZone },
      }));
    } catch (e) {
      reply.status(422);
      return page(req, reply, { errors: formErrors(req, e) });
    }
    return reply.redirect(`${BASE}/team?ok=common.saved`, 303);
  });

  // The server refuses what the page does not offer: the last active owner stays (409, the page says why).
  const lastOwner = async (req: FastifyRequest, reply: FastifyReply, e: unknown) => {
    if (!(e instanceof LastOwnerError)) throw e;
    reply.status(409);
    return page(req, reply, { errors: { top: words(req.cabinet.lang)('last_owner'), fields: {} } });
  };

  app.post<{ Params: { id: string } }>('/:id/role', { schema: { hide: true } }, async (req, reply) => {
    const who = cabinetActor(req);
    try {
      await team.setRole(liveMerchantIdOf(req), req.params.id, formBody(req).role ?? '', (c, r) => writeAudit(c, who, {
      action: 'merchant_user.role', objectType: 'merchant_user', objectId: r.after.id, ...changed(memberAudit(r.before), memberAudit(r.after)),
      }));
    } catch (e) { return lastOwner(req, reply, e); }
    return reply.redirect(`${BASE}/team?ok=common.saved`, 303);
  });

  app.post<{ Params: { id: string } }>('/:id/remove', { schema: { hide: true } }, async (req, reply) => {
    const who = cabinetActor(req);
    try {
      await team.remove(liveMerchantIdOf(req), req.params.id, async (c, m) => {
        await writeAudit(c, who, { action: 'merchant_user.remove', objectType: 'merchant_user', objectId: m.id, before: memberAudit(m), after: null });
        // The keys the member created were revoked with the removal: one entry each.
        for (const k of m.revokedKeys) await apiKeyAudit(who, 'api_key.revoke', 'member_removed')(c, k);
      });
    } catch (e) { return lastOwner(req, reply, e); }
    return reply.redirect(`${BASE}/team?ok=common.saved`, 303);
  });

  // The invitation link: public (no session yet); the form is protected by a double-submit cookie as the sign-in form is.
  const acceptPage = async (req: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply, data: Record<string, unknown> = {}) => {
    const inv = await team.invitation(req.params.token);
    const w = words(req.cabinet.lang);
    if (!inv) { reply.status(404); return render(req, reply, 'error', { status: 404, message: w('accept.gone') }); }
    const pre = newFormSecret();
    reply.setCookie(LOGIN_CSRF_COOKIE, pre, { ...opts.cookieOpts, maxAge: 3600 });
    return render(req, reply, 'team-accept', { csrf: pre, w, email: inv.email, min: MIN_PASSWORD, token: req.params.token, ...data });
  };

  app.get<{ Params: { token: string } }>('/invite/:token', { config: { cabinetPublic: true }, schema: { hide: true } }, async (req, reply) => acceptPage(req, reply));

  app.post<{ Params: { token: string } }>('/invite/:token', { config: { cabinetPublic: true }, schema: { hide: true } }, async (req, reply) => {
    const b = formBody(req);
    const pre = req.cookies[LOGIN_CSRF_COOKIE] ?? '';
    if (!pre || !safeEqual(b._csrf ?? '', pre)) { reply.status(403); return acceptPage(req, reply, { errors: { top: req.cabinet.t('csrf.invalid'), fields: {} } }); }
    try {
      let merchantId = '';
      const m = await team.accept(req.params.token, b.password ?? '', async (c, u) => {
        merchantId = u.merchant_id;
        const who = { actor: `merchant-user:${u.id}`, name: u.email, ip: req.ip ?? null };
        await writeAudit(c, who, {
          action: 'merchant_user.activate', objectType: 'merchant_user', objectId: u.id, before: { state: 'invited' }, after: { state: 'active', merchant_id: u.merchant_id },
        });
        await writeAudit(c, who, { action: 'merchant.sign_in', objectType: 'merchant_user', objectId: u.id, before: null, after: null });
      });
      if (!m) { reply.status(404); return render(req, reply, 'error', { status: 404, message: words(req.cabinet.lang)('accept.gone') }); }
      // "Save and sign in" signs the member in, never leaving them on the sign-in page. A new
      // member has no second factor yet; a team that requires one sends them to set it up.
      reply.clearCookie(LOGIN_CSRF_COOKIE, { path: BASE });
      reply.clearCookie(MODE_COOKIE, { path: BASE });
      reply.setCookie(SESSION_COOKIE, await opts.sessions.create(merchantId, m.id), opts.cookieOpts);
      return reply.redirect(BASE, 303);
    } catch (e) {
      reply.status(422);
      return acceptPage(req, reply, { errors: formErrors(req, e) });
    }
  });
}
