-- One payment per payment-form token, kept in a key table of its own: a unique index on
-- payments(form_nonce) cannot survive the monthly partitioning of payments (a unique index of a
-- partitioned table must include its partition key), this one does. A trigger writes the key
-- in the same statement that inserts the payment, so a form posted twice at once still fails
-- on the key (payment_form_nonces_pkey) and the second POST lands on the first one's payment.
CREATE TABLE "payment_form_nonces" (
    "nonce" TEXT NOT NULL PRIMARY KEY,
    "payment_id" TEXT NOT NULL
);

INSERT INTO "payment_form_nonces" ("nonce", "payment_id")
SELECT "form_nonce", "id" FROM "payments" WHERE "form_nonce" IS NOT NULL;

CREATE FUNCTION payment_form_nonce_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO payment_form_nonces (nonce, payment_id) VALUES (NEW.form_nonce, NEW.id);
  RETURN NEW;
END $$;

CREATE TRIGGER "payments_form_nonce_key" AFTER INSERT ON "payments"
  FOR EACH ROW WHEN (NEW."form_nonce" IS NOT NULL) EXECUTE FUNCTION payment_form_nonce_key();

DROP INDEX "payments_form_nonce_key";
CREATE INDEX "payments_form_nonce_idx" ON "payments" ("form_nonce") WHERE "form_nonce" IS NOT NULL;
