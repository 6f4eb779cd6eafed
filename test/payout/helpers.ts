import { Decimal } from 'decimal.js';
import { withPgTx } from '../../src/db/client.js';
import { post, verifyBalances } from '../../src/domain/ledger/ledger.js';
import { adjustment } from '../../src/domain/ledger/postings.js';
import { encrypt } from '../../src/lib/crypto.js';
import { cardDigits, maskCard } from '../../src/lib/card.js';
import { newId } from '../../src/lib/ids.js';
import type { TestApp } from '../helpers/app.js';
import { createMerchant, type MerchantFixture } from '../factories/merchant.js';

export const GOOD_CARD = '4242424242424242';
export const FAIL_CARD = '4000000000000002';
export const GOOD_PHONE = '+79161234567';
export const FAIL_PHONE = '+79160000002';
export const BANK = 100000000111;
export const INACTIVE_BANK = 100000000999;

/** A verified merchant with the regular-payout grant (the state payouts need), plus overrides. */
export async function payoutMerchant(t: TestApp, merchant: Record<string, unknown> = {}): Promise<MerchantFixture> {
  return createMerchant(t, { merchant: { verified: true, grantRegularPayouts: true, ...merchant } });
}

/** Funds the RUB balance with a ledger ADJUSTMENT posting. */
export async function fund(t: TestApp, merchantId: string, amount: string): Promise<void> {
  await withPgTx(t.db.pool, (c) => post(c, adjustment({ adjustmentId: newId(), merchantId, currency: 'RUB', amount: new Decimal(amount) })));
}

export async function balance(t: TestApp, merchantId: string): Promise<{ available: string; locked: string; hold: string }> {
  const r = await t.db.pool.query(
    `SELECT available::text, locked::text, hold::text FROM balances WHERE merchant_id = $1 AND currency = 'RUB'`, [merchantId],
  );
  const b = r.rows[0];
  return { available: new Decimal(b.available).toFixed(2), locked: new Decimal(b.locked).toFixed(2), hold: new Decimal(b.hold).toFixed(2) };
}

export async function seedBanks(t: TestApp): Promise<void> {
  await t.db.pool.query(
    `INSERT INTO sbp_banks (member_id, name, name_en, bic, active) VALUES ($1, 'Тест Банк', 'Test Bank', '044525000', true),
            ($2, 'Закрытый Банк', 'Closed Bank', '044525999', false) ON CONFLICT (member_id) DO NOTHING`,
    [BANK, INACTIVE_BANK],
  );
}

/** A stored payout account, written with the operator API's storage rule. */
export async function insertAccount(t: TestApp, merchantId: string, o: { type: 'CARD' | 'SBP'; identifier: string; status?: 'ACTIVE' | 'BANNED'; bank?: number | null; holder?: string }): Promise<string> {
  const id = newId();
  const full = o.type === 'CARD' ? cardDigits(o.identifier) : o.identifier;
  await t.db.pool.query(
    `INSERT INTO payout_accounts (id, merchant_id, type, status, identifier_enc, identifier_masked, card_holder, bank_member_id)
     VALUES ($1, $2, $3::"PayoutAccountType", $4::"PayoutAccountStatus", $5, $6, $7, $8)`,
    [id, merchantId, o.type, o.status ?? 'ACTIVE', encrypt(t.config.tokenEncryptionKey, full),
      o.type === 'CARD' ? maskCard(full) : full, o.type === 'CARD' ? (o.holder ?? 'IVAN IVANOV') : null,
      o.type === 'SBP' ? (o.bank === undefined ? BANK : o.bank) : null],
  );
  return id;
}

export function regular(t: TestApp, m: MerchantFixture, payload: Record<string, unknown>) {
  return t.app.inject({ method: 'POST', url: '/api/v1/payout/regular/create', headers: m.auth, payload });
}

export function personal(t: TestApp, m: MerchantFixture, payload: Record<string, unknown>) {
  return t.app.inject({ method: 'POST', url: '/api/v1/payout/personal/create', headers: m.auth, payload });
}

export const card = (amount: string, extra: Record<string, unknown> = {}) => ({
  amount, currency: 'RUB', account_type: 'credit_card', account_identifier: GOOD_CARD, card_holder: 'IVAN IVANOV', ...extra,
});

export const sbp = (amount: string, extra: Record<string, unknown> = {}) => ({
  amount, currency: 'RUB', account_type: 'sbp', account_identifier: GOOD_PHONE, account_bank: BANK, ...extra,
});

export async function booksBalance(t: TestApp): Promise<unknown[]> {
  return verifyBalances(t.db.pool);
}
