/**
 * Why a payment FAILed, as the merchant reads it (`error_code` / `error_message` in payment
 * objects, `ErrorCode` / `ErrorMessage` in FAIL postbacks, the cabinet and its CSV). The code is
 * what the acquirer (or the service) reported and `payments.failure_reason` keeps: the sandbox's,
 * T-Bank's mapped codes and YooKassa's `cancellation_details.reason` as they are. The API and the
 * postbacks speak English; the cabinet speaks its language. Unknown codes get a generic text
 * (the code is shown beside it).
 */
import type { Lang } from '../../lib/i18n.js';

/**
 * The failure reason of a payment that every connector of its route refused before any money
 * could move (docs/adr/0056-provider-outage-is-not-a-decline.md): not the payer's decline.
 */
export const PROVIDER_UNAVAILABLE = 'provider_unavailable';

const MESSAGES: Record<string, Record<Lang, string>> = {
  card_declined: { en: 'The card was declined by the issuer.', ru: 'Банк-эмитент отклонил платёж по карте.' },
  general_decline: { en: 'The card was declined by the issuer.', ru: 'Банк-эмитент отклонил платёж по карте.' },
  insufficient_funds: {
    en: "Not enough money on the payer's card: the issuer declined the payment for insufficient funds.",
    ru: 'На карте плательщика недостаточно средств: банк-эмитент отклонил платёж.',
  },
  no_card: { en: 'No card data was given.', ru: 'Данные карты не переданы.' },
  acquirer_error: { en: 'The acquirer did not answer; no money was taken.', ru: 'Эквайер не ответил; деньги не списаны.' },
  abandoned: { en: 'The payment was not completed in time; no money was taken.', ru: 'Платёж не завершён вовремя; деньги не списаны.' },
  '3d_secure_failed': {
    en: "The payer's bank did not confirm the payment (3-D Secure failed or was not passed).",
    ru: 'Банк плательщика не подтвердил платёж (3-D Secure не пройден).',
  },
  payer_declined: { en: 'The payer cancelled the payment at the bank.', ru: 'Плательщик отменил платёж в банке.' },
  challenge_abandoned: {
    en: 'The payer did not confirm the payment at the bank in time; no money was taken.',
    ru: 'Плательщик не подтвердил платёж в банке вовремя; деньги не списаны.',
  },
  qr_expired: {
    en: 'The SBP QR code expired before the payer paid; no money was taken.',
    ru: 'QR-код СБП истёк до оплаты; деньги не списаны.',
  },
  expired: { en: 'The payment expired before it was confirmed; no money was taken.', ru: 'Срок платежа истёк до подтверждения; деньги не списаны.' },
  expired_on_confirmation: {
    en: 'The payer did not confirm the payment in time; no money was taken.',
    ru: 'Плательщик не подтвердил платёж вовремя; деньги не списаны.',
  },
  card_expired: { en: "The payer's card has expired.", ru: 'Срок действия карты плательщика истёк.' },
  invalid_card_number: { en: 'The card number is wrong.', ru: 'Неверный номер карты.' },
  invalid_csc: { en: 'The card security code (CVC) is wrong.', ru: 'Неверный код безопасности карты (CVC).' },
  call_issuer: {
    en: "The issuer declined the payment; the payer should call their bank.",
    ru: 'Банк-эмитент отклонил платёж; плательщику нужно обратиться в свой банк.',
  },
  issuer_unavailable: { en: "The payer's bank did not answer; no money was taken.", ru: 'Банк плательщика не ответил; деньги не списаны.' },
  fraud_suspected: { en: 'The payment was blocked as suspected fraud.', ru: 'Платёж заблокирован по подозрению в мошенничестве.' },
  country_forbidden: { en: "Payments with a card of this country are not accepted.", ru: 'Оплата картой этой страны не принимается.' },
  payment_method_limit_exceeded: {
    en: "The limit of the payer's card or account was exceeded.",
    ru: 'Превышен лимит карты или счёта плательщика.',
  },
  payment_method_restricted: {
    en: "Payments with the payer's card or account are restricted by its bank.",
    ru: 'Банк ограничил операции по карте или счёту плательщика.',
  },
  connection_refused: {
    en: 'The payment provider could not be reached; no money was taken.',
    ru: 'Платёжный провайдер недоступен; деньги не списаны.',
  },
  provider_unavailable: {
    en: 'The payment method was temporarily unavailable; no money was taken.',
    ru: 'Способ оплаты был временно недоступен; деньги не списаны.',
  },
  payment_method_revoked: {
    en: 'The saved card can no longer be charged: the payer revoked it at the provider (or it expired there); it is revoked here too.',
    ru: 'Сохранённую карту больше нельзя списывать: плательщик отозвал разрешение у провайдера (или срок истёк); здесь она тоже отозвана.',
  },
  charge_disabled: {
    en: 'The provider has recurring charges switched off for this account; no money was taken.',
    ru: 'У провайдера для этого аккаунта выключены рекуррентные списания; деньги не списаны.',
  },
  initiator_mismatch: {
    en: 'The provider refused the charge: its initiator type does not match the saved card; no money was taken.',
    ru: 'Провайдер отклонил списание: тип инициатора не соответствует сохранённой карте; деньги не списаны.',
  },
  sandbox_refuse: {
    en: 'The sandbox connector refuses every operation (its setting refuse is on); no money was taken.',
    ru: 'Коннектор песочницы отклоняет все операции (включена настройка refuse); деньги не списаны.',
  },
};

const GENERIC: Record<Lang, string> = { en: 'The payment was declined.', ru: 'Платёж отклонён.' };

export function paymentError(status: string, failureReason: string | null, lang: Lang = 'en'): { code: string | null; message: string | null } {
  if (status !== 'FAIL' || !failureReason) return { code: null, message: null };
  return { code: failureReason, message: (MESSAGES[failureReason] ?? GENERIC)[lang] };
}
