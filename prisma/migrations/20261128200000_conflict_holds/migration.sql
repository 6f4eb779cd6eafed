-- A provider's notification that a payout or refund we failed was made, which no read could
-- confirm yet, holds the money it says left (docs/adr/0080-unconfirmed-conflict-holds-the-money.md):
-- available -> the merchant's locked (and hold, a payout's fee) until a read confirms it or the
-- operator resolves the conflict; the hold then ends once, released back to available.
-- Added in a migration of their own: a new enum value cannot be used in the transaction that adds it.
ALTER TYPE "LedgerEntryKind" ADD VALUE IF NOT EXISTS 'PAYOUT_CONFLICT_HOLD';
ALTER TYPE "LedgerEntryKind" ADD VALUE IF NOT EXISTS 'PAYOUT_CONFLICT_RELEASE';
ALTER TYPE "LedgerEntryKind" ADD VALUE IF NOT EXISTS 'REFUND_CONFLICT_HOLD';
ALTER TYPE "LedgerEntryKind" ADD VALUE IF NOT EXISTS 'REFUND_CONFLICT_RELEASE';
