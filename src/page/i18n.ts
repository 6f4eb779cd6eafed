import type { PayFieldCode } from '../domain/payment/pay-input.js';

export type Lang = 'ru' | 'en';

/**
 * The page language: `?lang=` when given, else the first of ru/en in Accept-Language by
 * q-value; English by default.
 */
export function pickLang(acceptLanguage: string | undefined, override?: unknown): Lang {
  if (override === 'ru' || override === 'en') return override;
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part, i) => {
      const [tag, ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)).find(Boolean);
      return { tag: tag ?? '', q: q ? Number(q[1]) : 1, i };
    })
    .filter((x) => x.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const { tag } of ranked) {
    if (tag === 'ru' || tag.startsWith('ru-')) return 'ru';
    if (tag === 'en' || tag.startsWith('en-')) return 'en';
  }
  return 'en';
}

const en = {
  title: 'Payment',
  payTo: 'Payment to',
  amount: 'Amount',
  toPay: 'To pay',
  inRub: 'Charged in roubles',
  rate: 'Rate',
  commission: 'Service fee',
  total: 'Total',
  method: 'Payment method',
  card: 'Bank card',
  sbp: 'SBP',
  cardNumber: 'Card number',
  cardExpiry: 'Expiry (MM/YY)',
  cardCvc: 'CVC',
  saveCard: 'Save this card for future payments to {merchant}',
  payCard: 'Pay',
  sbpHint: 'The next screen shows the one QR code to scan with your bank app (or a button to open it on this phone).',
  sbpConfirm: 'Pay by SBP',
  sandbox: 'Sandbox',
  sandboxAmount: 'Amount sent (RUB), to test underpaid or overpaid',
  sandboxCards: 'Test cards: 4242 4242 4242 4242 pays, 4000 0000 0000 0002 is declined.',
  secure: 'Card data is sent over an encrypted connection and is never stored.',
  notFoundTitle: 'Bill not found',
  notFoundText: 'There is no bill at this address. Check the link you were given.',
  inactiveTitle: 'This bill is not active',
  inactiveText: 'The shop has switched this bill off; it accepts no payment. Contact the shop.',
  paidTitle: 'This bill is already paid',
  paidText: 'A payment for this bill has been received. There is nothing more to pay.',
  progressTitle: 'Payment in progress',
  progressText: 'A payment for this bill is being processed. Refresh this page in a moment.',
  unavailableText: 'This shop cannot take payments right now. Try again later or contact the shop.',
  rateTitle: 'Payment temporarily unavailable',
  rateText: 'The exchange rate for this currency is not set. Try again later or contact the shop.',
  limitTitle: 'Too many attempts',
  limitText: 'There were too many unsuccessful attempts. Wait a few minutes and try again.',
  csrfTitle: 'The form has expired',
  csrfText: 'For your security the payment form expires. Open the payment page again.',
  backToForm: 'Back to the payment page',
  successTitle: 'Payment received',
  underpaidTitle: 'Payment received: less than due',
  overpaidTitle: 'Payment received: more than due',
  failTitle: 'Payment failed',
  failText: 'The payment was declined. No money was taken. You can try again.',
  paidAmount: 'Amount received',
  paymentId: 'Payment',
  returnToShop: 'Return to the shop',
  redirecting: 'Returning you to the shop…',
  tryAgain: 'Try again',
  lastFailed: 'The previous attempt did not go through. You can try again.',
  formErrors: 'Please correct the fields marked below.',
  scanToPay: 'Scan to pay',
  openPage: 'Open the payment page',
  qrTitle: 'QR code for payment',
  language: 'Русский',
  expiredTitle: 'This bill has expired',
  expiredText: 'The time to pay this bill is over; it accepts no payment. Contact the shop for a new one.',
  backToShop: 'Back to the shop',
  items: 'Order',
  payerDetails: 'Your details',
  payerEmail: 'E-mail',
  payerPhone: 'Phone',
  payerName: 'Name',
  payerComment: 'Comment',
  waitTitle: 'Waiting for the payment',
  waitText: 'This page updates by itself when the payment is done.',
  act3dsTitle: 'Confirm the payment with your bank',
  act3dsText: 'Your bank asks you to confirm this payment on its page.',
  act3dsButton: 'Go to the bank confirmation',
  actRedirectTitle: 'Continue on the payment page',
  actRedirectText: 'The payment continues on the page of the payment provider; you will come back here.',
  actRedirectButton: 'Continue to payment',
  actSbpTitle: 'Pay with SBP',
  actSbpText: 'Scan the QR code with your bank app, or open your bank app below, and confirm the payment.',
  actSbpApps: 'Open in a bank app',
  cardHosted: 'You will enter the card on the secure page of the payment provider.',
  testBanner: 'Test payment: no real money moves. Use the test cards below.',
  testBannerShort: 'Test payment: no real money',
  sandboxProfile: 'Sandbox deployment: no real money moves',
  declinedTitle: 'The payment was declined. No money was taken. You can try another card.',
  declinedSbpTitle: 'The payment did not go through. No money was taken. You can try again.',
  backToShopAfterFail: 'Back to the shop without paying',
  tryOtherCard: 'Try another card',
  methodDownTitle: 'This payment method is temporarily unavailable',
  methodDownText: 'The payment provider is not answering right now. No money was taken. You can choose another payment method or try again later.',
  checkTitle: 'We are checking your payment with the bank',
  checkText: 'The bank has not told us the result yet, so we are asking it. This page updates by itself; when the result is known you will be sent back to the shop.',
  checkTime: 'It can take up to {n} min. You can close this page: the shop will be told the result.',
  sandboxCardsMore: 'More test cards: 4000 0027 6000 3184 asks for 3-D Secure, 4000 0000 0000 9995 has insufficient funds, 4000 0000 0000 0119 is charged but the answer is late.',
} as const;

type Messages = { [K in keyof typeof en]: string };

const ru: Messages = {
  title: 'Оплата',
  payTo: 'Оплата в пользу',
  amount: 'Сумма',
  toPay: 'К оплате',
  inRub: 'Списывается в рублях',
  rate: 'Курс',
  commission: 'Комиссия сервиса',
  total: 'Итого',
  method: 'Способ оплаты',
  card: 'Банковская карта',
  sbp: 'СБП',
  cardNumber: 'Номер карты',
  cardExpiry: 'Срок действия',
  cardCvc: 'CVC',
  saveCard: 'Сохранить карту для следующих платежей в пользу {merchant}',
  payCard: 'Оплатить',
  sbpHint: 'На следующем экране будет QR-код для приложения банка (или кнопка, чтобы открыть его на этом телефоне).',
  sbpConfirm: 'Оплатить через СБП',
  sandbox: 'Тестовый режим',
  sandboxAmount: 'Отправленная сумма (RUB), для проверки недоплаты или переплаты',
  sandboxCards: 'Тестовые карты: 4242 4242 4242 4242 проходит, 4000 0000 0000 0002 отклоняется.',
  secure: 'Данные карты передаются по защищённому соединению и не сохраняются.',
  notFoundTitle: 'Счёт не найден',
  notFoundText: 'По этому адресу счёта нет. Проверьте полученную ссылку.',
  inactiveTitle: 'Счёт не активен',
  inactiveText: 'Магазин отключил этот счёт, оплата по нему не принимается. Свяжитесь с магазином.',
  paidTitle: 'Счёт уже оплачен',
  paidText: 'Оплата по этому счёту получена. Больше ничего платить не нужно.',
  progressTitle: 'Платёж обрабатывается',
  progressText: 'Платёж по этому счёту сейчас обрабатывается. Обновите страницу через минуту.',
  unavailableText: 'Магазин сейчас не может принять оплату. Попробуйте позже или свяжитесь с магазином.',
  rateTitle: 'Оплата временно недоступна',
  rateText: 'Курс для этой валюты не задан. Попробуйте позже или свяжитесь с магазином.',
  limitTitle: 'Слишком много попыток',
  limitText: 'Было слишком много неудачных попыток. Подождите несколько минут и попробуйте снова.',
  csrfTitle: 'Форма устарела',
  csrfText: 'Для вашей безопасности форма оплаты действует ограниченное время. Откройте страницу оплаты снова.',
  backToForm: 'Вернуться к оплате',
  successTitle: 'Оплата получена',
  underpaidTitle: 'Оплата получена: меньше суммы счёта',
  overpaidTitle: 'Оплата получена: больше суммы счёта',
  failTitle: 'Оплата не прошла',
  failText: 'Платёж отклонён. Деньги не списаны. Можно попробовать снова.',
  paidAmount: 'Получено',
  paymentId: 'Платёж',
  returnToShop: 'Вернуться в магазин',
  redirecting: 'Возвращаем вас в магазин…',
  tryAgain: 'Попробовать снова',
  lastFailed: 'Предыдущая попытка не прошла. Можно попробовать снова.',
  formErrors: 'Исправьте отмеченные ниже поля.',
  scanToPay: 'Отсканируйте для оплаты',
  openPage: 'Открыть страницу оплаты',
  qrTitle: 'QR-код для оплаты',
  language: 'English',
  expiredTitle: 'Срок оплаты счёта истёк',
  expiredText: 'Время на оплату этого счёта вышло, оплата по нему не принимается. Обратитесь в магазин за новым счётом.',
  backToShop: 'Вернуться в магазин',
  items: 'Состав заказа',
  payerDetails: 'Ваши данные',
  payerEmail: 'E-mail',
  payerPhone: 'Телефон',
  payerName: 'Имя',
  payerComment: 'Комментарий',
  waitTitle: 'Ожидаем оплату',
  waitText: 'Страница обновится сама, когда платёж завершится.',
  act3dsTitle: 'Подтвердите платёж в банке',
  act3dsText: 'Банк просит подтвердить этот платёж на своей странице.',
  act3dsButton: 'Перейти к подтверждению в банке',
  actRedirectTitle: 'Продолжите на странице оплаты',
  actRedirectText: 'Оплата продолжится на странице платёжного сервиса, затем вы вернётесь сюда.',
  actRedirectButton: 'Перейти к оплате',
  actSbpTitle: 'Оплата через СБП',
  actSbpText: 'Отсканируйте QR-код в приложении банка или откройте приложение банка ниже и подтвердите оплату.',
  actSbpApps: 'Открыть в приложении банка',
  cardHosted: 'Данные карты вы введёте на защищённой странице платёжного сервиса.',
  testBanner: 'Тестовый платёж: реальные деньги не списываются. Используйте тестовые карты ниже.',
  testBannerShort: 'Тестовый платёж: без реальных денег',
  sandboxProfile: 'Тестовый стенд: реальные деньги не двигаются',
  declinedTitle: 'Платёж отклонён. Деньги не списаны. Можно попробовать другую карту.',
  declinedSbpTitle: 'Платёж не прошёл. Деньги не списаны. Можно попробовать снова.',
  backToShopAfterFail: 'Вернуться в магазин без оплаты',
  tryOtherCard: 'Попробовать другую карту',
  methodDownTitle: 'Этот способ оплаты временно недоступен',
  methodDownText: 'Платёжный провайдер сейчас не отвечает. Деньги не списаны. Можно выбрать другой способ оплаты или попробовать позже.',
  checkTitle: 'Проверяем ваш платёж в банке',
  checkText: 'Банк ещё не сообщил результат, и мы его запрашиваем. Страница обновится сама; когда результат станет известен, вы вернётесь в магазин.',
  checkTime: 'Это может занять до {n} мин. Страницу можно закрыть: магазин узнает результат.',
  sandboxCardsMore: 'Ещё тестовые карты: 4000 0027 6000 3184 просит 3-D Secure, 4000 0000 0000 9995 — недостаточно средств, 4000 0000 0000 0119 — списание с задержкой ответа.',
};

export const MESSAGES: Record<Lang, Messages> = { en, ru };

const fieldEn: Record<PayFieldCode, string> = {
  method_required: 'Choose a payment method.',
  method_invalid: 'Choose a payment method.',
  method_not_allowed: 'This bill cannot be paid with this method.',
  method_unavailable: 'This payment method is not available right now. Choose another one or try again later.',
  card_number_required: 'Enter the card number.',
  card_number_invalid: 'Check the card number.',
  card_expiry_required: 'Enter the expiry date.',
  card_expiry_invalid: 'Enter the expiry date as MM/YY.',
  card_expiry_past: 'This card has expired.',
  card_cvc_required: 'Enter the 3-digit code.',
  card_cvc_invalid: 'The code is 3 digits.',
  amount_invalid: 'Enter an amount such as 100.00.',
  payer_email_required: 'Enter your e-mail.',
  payer_email_invalid: 'Check the e-mail address.',
  payer_phone_required: 'Enter your phone number.',
  payer_phone_invalid: 'Enter the phone number with its code, 10 to 15 digits.',
  payer_name_required: 'Enter your name.',
  payer_name_invalid: 'The name is too long.',
  payer_comment_required: 'Enter a comment.',
  payer_comment_invalid: 'The comment is too long.',
};

const fieldRu: Record<PayFieldCode, string> = {
  method_required: 'Выберите способ оплаты.',
  method_invalid: 'Выберите способ оплаты.',
  method_not_allowed: 'Этот счёт нельзя оплатить этим способом.',
  method_unavailable: 'Этот способ оплаты сейчас недоступен. Выберите другой или попробуйте позже.',
  card_number_required: 'Введите номер карты.',
  card_number_invalid: 'Проверьте номер карты.',
  card_expiry_required: 'Введите срок действия.',
  card_expiry_invalid: 'Введите срок действия в виде ММ/ГГ.',
  card_expiry_past: 'Срок действия карты истёк.',
  card_cvc_required: 'Введите 3-значный код.',
  card_cvc_invalid: 'Код состоит из 3 цифр.',
  amount_invalid: 'Введите сумму, например 100.00.',
  payer_email_required: 'Введите e-mail.',
  payer_email_invalid: 'Проверьте адрес e-mail.',
  payer_phone_required: 'Введите номер телефона.',
  payer_phone_invalid: 'Введите номер с кодом, от 10 до 15 цифр.',
  payer_name_required: 'Введите имя.',
  payer_name_invalid: 'Имя слишком длинное.',
  payer_comment_required: 'Введите комментарий.',
  payer_comment_invalid: 'Комментарий слишком длинный.',
};

export const FIELD_MESSAGES: Record<Lang, Record<PayFieldCode, string>> = { en: fieldEn, ru: fieldRu };
export type { Messages };

/**
 * Why a payment was declined, as the payer reads it next to the card field: by the acquirer's
 * code (`payments.failure_reason`: the sandbox's, T-Bank's mapped ones, YooKassa's
 * cancellation reasons); an unknown code gets the general text. Never the acquirer's own
 * message, which is written for the merchant and may name internals.
 */
const DECLINE_EN: Record<string, string> = {
  card_declined: 'Your bank declined this card. Try another card or ask your bank.',
  general_decline: 'Your bank declined this card. Try another card or ask your bank.',
  insufficient_funds: 'There is not enough money on this card. Try another card.',
  card_expired: 'This card has expired. Try another card.',
  '3d_secure_failed': 'Your bank could not confirm the payment (3-D Secure). Try again or use another card.',
  payer_declined: 'The payment was cancelled at the bank. You can try again.',
  challenge_abandoned: 'The payment was not confirmed at the bank in time. You can try again.',
  qr_expired: 'The QR code expired before the payment was confirmed. You can try again.',
  expired_on_confirmation: 'The payment was not confirmed at the bank in time. You can try again.',
  abandoned: 'The payment was not completed in time. You can try again.',
  acquirer_error: 'The payment could not be processed just now. Try again in a moment.',
  no_connector: 'The payment could not be processed just now. Try again in a moment.',
  provider_unavailable: 'The payment provider is not answering right now. No money was taken. Choose another method or try again later.',
  no_card: 'The card details did not arrive. Enter the card again.',
  default: 'The payment was declined. Try another card or ask your bank.',
};

const DECLINE_RU: Record<string, string> = {
  card_declined: 'Банк отклонил эту карту. Попробуйте другую карту или обратитесь в банк.',
  general_decline: 'Банк отклонил эту карту. Попробуйте другую карту или обратитесь в банк.',
  insufficient_funds: 'На карте недостаточно средств. Попробуйте другую карту.',
  card_expired: 'Срок действия карты истёк. Попробуйте другую карту.',
  '3d_secure_failed': 'Банк не подтвердил платёж (3-D Secure). Попробуйте снова или используйте другую карту.',
  payer_declined: 'Платёж отменён в банке. Можно попробовать снова.',
  challenge_abandoned: 'Платёж не подтвердили в банке вовремя. Можно попробовать снова.',
  qr_expired: 'Срок QR-кода истёк до подтверждения платежа. Можно попробовать снова.',
  expired_on_confirmation: 'Платёж не подтвердили в банке вовремя. Можно попробовать снова.',
  abandoned: 'Платёж не завершён вовремя. Можно попробовать снова.',
  acquirer_error: 'Платёж сейчас не удалось провести. Попробуйте через минуту.',
  no_connector: 'Платёж сейчас не удалось провести. Попробуйте через минуту.',
  provider_unavailable: 'Платёжный провайдер сейчас не отвечает. Деньги не списаны. Выберите другой способ или попробуйте позже.',
  no_card: 'Данные карты не дошли. Введите карту ещё раз.',
  default: 'Платёж отклонён. Попробуйте другую карту или обратитесь в банк.',
};

export function declineText(lang: Lang, code: string | null | undefined): string {
  const table = lang === 'ru' ? DECLINE_RU : DECLINE_EN;
  // Provider codes may be namespaced (`tbank:not_found`); only known bare codes get their own text.
  return (code && Object.hasOwn(table, code) ? table[code] : table.default)!;
}
