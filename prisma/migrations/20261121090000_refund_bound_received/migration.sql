-- A payment's refunds are bounded by what it received in the bill's currency before commission
-- (account_amount + commission), as a card refund returns what the customer paid; the
-- commission is not returned to the merchant, so a full refund may need more than the payment
-- credited (api:error.balance_not_enough when the balance cannot cover it).
ALTER TABLE "payments" DROP CONSTRAINT "payments_amounts_check";
ALTER TABLE "payments" ADD CONSTRAINT "payments_amounts_check" CHECK (
    "amount" > 0 AND "amount_received" >= 0 AND "commission" >= 0 AND
    "refunded_amount" >= 0 AND "refunded_amount" <= COALESCE("account_amount", 0) + "commission");
