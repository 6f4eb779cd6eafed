-- A provider's answer that contradicts a final state moves the money the provider's way with
-- transfers of their own kinds (docs/decisions.md "A provider's answer after a final state").
-- Added in a migration of their own: a new enum value cannot be used in the transaction that adds it.
ALTER TYPE "LedgerEntryKind" ADD VALUE IF NOT EXISTS 'PAYMENT_CONFLICT_CREDIT';
ALTER TYPE "LedgerEntryKind" ADD VALUE IF NOT EXISTS 'PAYMENT_CONFLICT_DEBIT';
ALTER TYPE "LedgerEntryKind" ADD VALUE IF NOT EXISTS 'PAYOUT_CONFLICT_DEBIT';
ALTER TYPE "LedgerEntryKind" ADD VALUE IF NOT EXISTS 'PAYOUT_CONFLICT_CREDIT';
ALTER TYPE "LedgerEntryKind" ADD VALUE IF NOT EXISTS 'REFUND_CONFLICT_DEBIT';
ALTER TYPE "LedgerEntryKind" ADD VALUE IF NOT EXISTS 'REFUND_CONFLICT_CREDIT';
