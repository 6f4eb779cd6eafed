-- What a rehearsal learnt where the providers' documents leave a meaning open
-- (docs/adr/0135-rehearsal-findings-narrow-the-connector.md): {getstate_amount_after_refund:
-- 'left' | 'paid', charge_enabled: true | false}, a key present only once a step answered it.
-- api_url: the provider's address the run talked to; a finding holds for connectors of the same
-- kind at that address only (an emulator's reading never reaches a connector of the real API).
ALTER TABLE connector_rehearsals
  ADD COLUMN findings JSONB NOT NULL DEFAULT '{}'::jsonb,
  ADD COLUMN api_url  TEXT;

-- The card a provider saved for a rehearsal's payment, as its notification said (T-Bank gives the
-- RebillId there only), encrypted as every saved method's id is; the saved_card step charges it once.
ALTER TABLE connector_rehearsal_notices ADD COLUMN saved_method_enc TEXT;
