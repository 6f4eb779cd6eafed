import type { LoggerOptions } from 'pino';

/** Paths pino blanks out: secrets and card data never reach the logs. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.api_token', '*.apiToken', '*.token', '*.password', '*.card_number', '*.cardNumber', '*.card_cvc',
  '*.account_identifier', '*.identifier', '*.SignatureValue',
  'body.card_number', 'body.card_cvc', 'body.card_expiry', 'body.password', 'body.api_token',
];

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    serializers: {
      // Never log query strings: GET endpoints may carry identifiers.
      req: (req: { method: string; url: string; id: string }) => ({ method: req.method, url: req.url.split('?')[0], id: req.id }),
    },
  };
}
