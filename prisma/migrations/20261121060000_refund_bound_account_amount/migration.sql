-- Refunds are in the payment's account currency (the bill's currency, the balance the money
-- came into) and bounded by what that balance received from the payment (account_amount), so
-- payments.refunded_amount is bounded by account_amount, not by amount_received (which is in
-- RUB, the payer's currency). Same constraint name, so the existing error mapping still applies.
ALTER TABLE "payments" DROP CONSTRAINT "payments_amounts_check";
ALTER TABLE "payments" ADD CONSTRAINT "payments_amounts_check" CHECK (
    "amount" > 0 AND "amount_received" >= 0 AND "commission" >= 0 AND
    "refunded_amount" >= 0 AND "refunded_amount" <= COALESCE("account_amount", 0));
