import type { FfdVersion, PaymentMode, PaymentSubject } from './fiscal.js';
import type { Lang } from '../../lib/i18n.js';

/**
 * The words for a shop's 54-FZ settings, in Russian and English: one dictionary for every face
 * (the cabinet's shop page in its language, the console in English, the console's one-line
 * summary). The codes are YooKassa's (fiscal.ts); the words are those of the 54-FZ tables
 * (tax systems, VAT rates, payment subject and payment mode, FFD).
 */
export interface FiscalWords {
  labels: { fiscal: string; enabled: string; tax_system: string; vat: string; payment_subject: string; payment_mode: string; ffd_version: string };
  /** Tax systems: 4 (ENVD) only to name a stored value; it is refused. */
  tax: Record<1 | 2 | 3 | 4 | 5 | 6, string>;
  vat: Record<1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 | 11 | 12, string>;
  subject: Record<PaymentSubject, string>;
  mode: Record<PaymentMode, string>;
  ffd: Record<FfdVersion, string>;
}

export const FISCAL_WORDS: Record<Lang, FiscalWords> = {
  en: {
    labels: {
      fiscal: 'Fiscal receipts (54-FZ)', enabled: 'Send a receipt with every payment and refund', tax_system: 'Taxation system', vat: 'VAT rate',
      payment_subject: 'Payment subject', payment_mode: 'Payment mode', ffd_version: 'Fiscal document format (FFD)',
    },
    tax: { 1: 'General (OSN)', 2: 'Simplified, income (USN)', 3: 'Simplified, income minus expenses (USN)', 4: 'ENVD (abolished in 2021)', 5: 'Agricultural (ESN)', 6: 'Patent (PSN)' },
    vat: {
      1: 'No VAT', 2: 'VAT 0%', 3: 'VAT 10%', 4: 'VAT 20% (sales before 2026)', 5: 'VAT 10/110', 6: 'VAT 20/120 (before 2026)',
      7: 'VAT 5%', 8: 'VAT 7%', 9: 'VAT 5/105', 10: 'VAT 7/107', 11: 'VAT 22%', 12: 'VAT 22/122',
    },
    subject: {
      commodity: 'Goods', excise: 'Excise goods', job: 'Work', service: 'Service', gambling_bet: 'Gambling bet', gambling_prize: 'Gambling winnings',
      lottery: 'Lottery ticket', lottery_prize: 'Lottery winnings', intellectual_activity: 'Intellectual property', payment: 'Payment',
      agent_commission: "Agent's commission", composite: 'Composite (FFD 1.05 only)', another: 'Other',
    },
    mode: {
      full_prepayment: 'Full prepayment (100%)', partial_prepayment: 'Partial prepayment', advance: 'Advance', full_payment: 'Full payment',
      partial_payment: 'Partial payment and credit', credit: 'Credit', credit_payment: 'Credit repayment',
    },
    ffd: { '1.05': 'FFD 1.05', '1.2': 'FFD 1.2 (each line with its unit)' },
  },
  ru: {
    labels: {
      fiscal: 'Фискальные чеки (54-ФЗ)', enabled: 'Передавать чек с каждым платежом и возвратом', tax_system: 'Система налогообложения', vat: 'Ставка НДС',
      payment_subject: 'Предмет расчёта', payment_mode: 'Способ расчёта', ffd_version: 'Формат фискальных документов (ФФД)',
    },
    tax: { 1: 'Общая (ОСН)', 2: 'Упрощённая, доходы (УСН)', 3: 'Упрощённая, доходы минус расходы (УСН)', 4: 'ЕНВД (отменён в 2021 г.)', 5: 'ЕСХН', 6: 'Патентная (ПСН)' },
    vat: {
      1: 'Без НДС', 2: 'НДС 0%', 3: 'НДС 10%', 4: 'НДС 20% (продажи до 2026 г.)', 5: 'НДС 10/110', 6: 'НДС 20/120 (до 2026 г.)',
      7: 'НДС 5%', 8: 'НДС 7%', 9: 'НДС 5/105', 10: 'НДС 7/107', 11: 'НДС 22%', 12: 'НДС 22/122',
    },
    subject: {
      commodity: 'Товар', excise: 'Подакцизный товар', job: 'Работа', service: 'Услуга', gambling_bet: 'Ставка азартной игры', gambling_prize: 'Выигрыш азартной игры',
      lottery: 'Лотерейный билет', lottery_prize: 'Выигрыш лотереи', intellectual_activity: 'Результаты интеллектуальной деятельности', payment: 'Платёж',
      agent_commission: 'Агентское вознаграждение', composite: 'Составной предмет расчёта (только ФФД 1.05)', another: 'Иной предмет расчёта',
    },
    mode: {
      full_prepayment: 'Предоплата 100%', partial_prepayment: 'Частичная предоплата', advance: 'Аванс', full_payment: 'Полный расчёт',
      partial_payment: 'Частичный расчёт и кредит', credit: 'Передача в кредит', credit_payment: 'Оплата кредита',
    },
    ffd: { '1.05': 'ФФД 1.05', '1.2': 'ФФД 1.2 (с единицей измерения в каждой строке)' },
  },
};

/** A code in words ("VAT 22%"), or the code itself when the dictionary has no word for it. */
export function fiscalWord(lang: Lang, kind: 'tax' | 'vat' | 'subject' | 'mode' | 'ffd', code: string | number | null | undefined): string {
  if (code === null || code === undefined || code === '') return '—';
  return (FISCAL_WORDS[lang][kind] as Record<string, string>)[String(code)] ?? String(code);
}

/** The dictionary as the cabinet's message keys (`shops.tax_1`, `shops.vat_11`, `shops.subject_commodity`, `shops.ffd_1_2`...). */
export function fiscalMessages(lang: Lang): Record<string, string> {
  const w = FISCAL_WORDS[lang];
  const out: Record<string, string> = {
    'shops.fiscal': w.labels.fiscal, 'shops.fiscal_enabled': w.labels.enabled, 'shops.tax_system': w.labels.tax_system, 'shops.vat': w.labels.vat,
    'shops.payment_subject': w.labels.payment_subject, 'shops.payment_mode': w.labels.payment_mode, 'shops.ffd_version': w.labels.ffd_version,
  };
  for (const [k, s] of Object.entries(w.tax)) out[`shops.tax_${k}`] = s;
  for (const [k, s] of Object.entries(w.vat)) out[`shops.vat_${k}`] = s;
  for (const [k, s] of Object.entries(w.subject)) out[`shops.subject_${k}`] = s;
  for (const [k, s] of Object.entries(w.mode)) out[`shops.mode_${k}`] = s;
  for (const [k, s] of Object.entries(w.ffd)) out[`shops.ffd_${k.replace('.', '_')}`] = s;
  return out;
}
