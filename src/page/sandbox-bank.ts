import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Decimal } from 'decimal.js';
import { requestInput } from '../lib/input.js';
import { peopleAmountText, readAmount } from '../lib/amount-text.js';
import { isValidAmount } from '../lib/money.js';
import { PayCsrf } from './csrf.js';
import { negotiateLang } from '../lib/i18n.js';
import { infoPage, pageView, type PageCtx } from './render.js';
import { installPageHeaders } from './index.js';

const PARAMS = { type: 'object', properties: { paymentId: { type: 'string', maxLength: 64 } }, required: ['paymentId'] } as const;
const ID = /^[A-Za-z0-9]{1,64}$/;

const T = {
  en: {
    bank: 'Sandbox Bank', tds: '3-D Secure confirmation', tdsText: 'Confirm the payment of', confirm: 'Confirm', fail: 'Fail',
    sbp: 'SBP payment', sbpText: 'The shop asks you to pay', amount: 'Amount to send (RUB)', pay: 'Confirm payment', cancel: 'Cancel',
    goneTitle: 'Nothing to confirm', goneText: 'This operation no longer waits for you (already answered or expired).', back: 'Back to the payment',
    note: 'This is the sandbox: no real money moves.',
  },
  ru: {
    bank: 'Песочница Банк', tds: 'Подтверждение 3-D Secure', tdsText: 'Подтвердите платёж на сумму', confirm: 'Подтвердить', fail: 'Отклонить',
    sbp: 'Оплата через СБП', sbpText: 'Магазин просит оплатить', amount: 'Сумма перевода (RUB)', pay: 'Подтвердить оплату', cancel: 'Отменить',
    goneTitle: 'Подтверждать нечего', goneText: 'Эта операция больше не ждёт вашего ответа (уже отвечено или истекло время).', back: 'Вернуться к платежу',
    note: 'Это песочница: настоящие деньги не списываются.',
  },
} as const;

/**
 * The sandbox bank's pages (PROVIDERS.md "Sandbox behaviour"): `/sandbox/3ds/{payment_id}`
 * (Confirm pays, Fail declines) and `/sandbox/sbp/{payment_id}` (confirm, optionally another
 * amount, or cancel). They play the bank: they change only the sandbox's own memory
 * (sandbox_operations) and send the payer back to the payment's page, which asks the sandbox
 * for the outcome like any provider.
 */
export default async function sandboxBankRoutes(app: FastifyInstance): Promise<void> {
  const bank = app.services.sandboxBank;
  const csrf = new PayCsrf(app.config.tokenEncryptionKey);
  installPageHeaders(app);

  const ctxOf = (req: FastifyRequest, reply: FastifyReply): PageCtx => ({
    lang: negotiateLang(req.headers['accept-language'], (req.query as Record<string, unknown> | undefined)?.lang), nonce: reply.cspNonce, sandbox: true, profile: app.config.profile,
  });
  const html = (reply: FastifyReply, status: number, body: string) => reply.status(status).type('text/html; charset=utf-8').send(body);
  const backTo = (billId: string, id: string) => `/pay/${billId}/payments/${id}`;

  /** The waiting operation of `kind` with its payment, or null (unknown, answered, expired). */
  async function waiting(id: string, kind: 'challenge' | 'sbp_waiting') {
    if (!ID.test(id)) return null;
    const op = await bank.find(id);
    const p = op ? await bank.paymentCard(id) : null;
    return op && p && op.status === kind && !op.expired ? { op, p } : { op: null, p };
  }

  function gone(req: FastifyRequest, reply: FastifyReply, billId: string | null, id: string) {
    const ctx = ctxOf(req, reply);
    const t = T[ctx.lang];
    return html(reply, 409, infoPage(ctx, { title: t.goneTitle, text: t.goneText, icon: 'info', testId: 'sandbox-gone', link: billId ? { href: backTo(billId, id), label: t.back } : undefined }));
  }

  function page(ctx: PageCtx, kind: '3ds' | 'sbp', id: string, amount: Decimal): string {
    const w = T[ctx.lang];
    return pageView('sandbox-bank', ctx, { title: kind === '3ds' ? w.tds : w.sbp, w, kind, id, amount, token: csrf.issue(`sbx:${id}`) });
  }

  for (const kind of ['3ds', 'sbp'] as const) {
    const state = kind === '3ds' ? 'challenge' : 'sbp_waiting';
    app.get<{ Params: { paymentId: string } }>(`/${kind}/:paymentId`, { schema: { hide: true, params: PARAMS } }, async (req, reply) => {
      const w = await waiting(req.params.paymentId, state);
      if (!w?.op) return gone(req, reply, w?.p?.billId ?? null, req.params.paymentId);
      return html(reply, 200, page(ctxOf(req, reply), kind, req.params.paymentId, w.p!.amount));
    });

    app.post<{ Params: { paymentId: string } }>(`/${kind}/:paymentId`, { schema: { hide: true, params: PARAMS } }, async (req, reply) => {
      const id = req.params.paymentId;
      const raw = requestInput(req);
      const w = await waiting(id, state);
      if (!w?.op || !csrf.verify(`sbx:${id}`, raw._csrf)) return gone(req, reply, w?.p?.billId ?? null, id);
      let amount: Decimal | undefined;
      if (raw.decision === 'confirm') {
        amount = w.p!.amount;
        if (kind === 'sbp' && typeof raw.amount === 'string' && raw.amount.trim() !== '') {
          // As the payer types it ("1 500,50"), then the one amount format and range.
          const a = readAmount(peopleAmountText(raw.amount, ctxOf(req, reply).lang));
          if (a === null || !isValidAmount(a)) return html(reply, 422, page(ctxOf(req, reply), kind, id, w.p!.amount));
          amount = a;
        }
      }
      if (await bank.decide(id, state, raw.decision === 'confirm' ? 'paid' : 'declined', amount)) {
        // The sandbox tells the service at once, as a provider's notification would.
        const st = await app.services.paymentPage.paymentState(w.p!.billId, id);
        if (st?.connector) await app.services.payments.askProvider({ id, connector: st.connector, ref: st.ref, data: st.data });
      }
      return reply.redirect(backTo(w.p!.billId, id), 303);
    });
  }
}
