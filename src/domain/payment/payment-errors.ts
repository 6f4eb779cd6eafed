/**
 * Why a payment FAILed, as the merchant reads it (`error_code` / `error_message` in payment
 * objects, `ErrorCode` / `ErrorMessage` in FAIL postbacks). The code is what the acquirer (or
 * the service) reported and `payments.failure_reason` keeps; unknown codes get a generic text.
 */
const MESSAGES: Record<string, string> = {
  card_declined: 'The card was declined by the issuer.',
  no_card: 'No card data was given.',
  acquirer_error: 'The acquirer did not answer; no money was taken.',
  abandoned: 'The payment was not completed in time; no money was taken.',
};

export function paymentError(status: string, failureReason: string | null): { code: string | null; message: string | null } {
  if (status !== 'FAIL' || !failureReason) return { code: null, message: null };
  return { code: failureReason, message: MESSAGES[failureReason] ?? 'The payment was declined.' };
}
