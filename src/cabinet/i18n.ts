import type { FastifyRequest } from 'fastify';

export type Lang = 'ru' | 'en';
export const LANGS: readonly Lang[] = ['ru', 'en'];

const en = {
  'app.title': 'Merchant cabinet',
  'nav.dashboard': 'Dashboard', 'nav.bills': 'Bills', 'nav.payments': 'Payments', 'nav.payouts': 'Payouts',
  'nav.shops': 'Shops', 'nav.webhooks': 'Webhooks', 'nav.api': 'API integration', 'nav.accounts': 'Payout accounts', 'nav.team': 'Team',
  'nav.signout': 'Sign out', 'nav.menu': 'Menu', 'nav.skip': 'Skip to content', 'nav.lang': 'Language',
  'login.title': 'Sign in', 'login.email': 'Email', 'login.password': 'Password', 'login.submit': 'Sign in',
  'login.invalid': 'Wrong email or password.',
  'login.throttled': 'Too many sign-in attempts. Please try again later.',
  'login.banned': 'This merchant account is blocked.',
  'login.expired': 'Your session has expired. Please sign in again.',
  'login.signedout': 'You have signed out.',
  'csrf.invalid': 'The form has expired. Reload the page and try again.',
  'common.save': 'Save', 'common.create': 'Create', 'common.cancel': 'Cancel', 'common.filter': 'Filter',
  'common.reset': 'Reset', 'common.prev': 'Previous', 'common.next': 'Next', 'common.none': 'Nothing here yet.',
  'common.id': 'ID', 'common.status': 'Status', 'common.amount': 'Amount', 'common.currency': 'Currency',
  'common.created': 'Created', 'common.shop': 'Shop', 'common.all': 'All', 'common.from': 'From', 'common.to': 'To',
  'common.yes': 'Yes', 'common.no': 'No', 'common.details': 'Details', 'common.copy': 'Copy', 'common.copied': 'Copied',
  'common.saved': 'Saved.', 'common.readonly': 'This action is not available yet.', 'common.back': 'Back',
  'common.page': 'Page {n}', 'common.actions': 'Actions', 'common.optional': 'optional',
  'common.fix': 'Please correct the highlighted fields.',
  'dash.title': 'Dashboard', 'dash.balances': 'Balances', 'dash.available': 'Available', 'dash.locked': 'Locked',
  'dash.hold': 'Hold (fees)', 'dash.turnover': 'Turnover, last 30 days', 'dash.latest': 'Latest payments',
  'dash.chart_label': 'Turnover per day for the last 30 days, total {total}',
  'bills.title': 'Bills', 'bills.new': 'New bill', 'bills.type': 'Type', 'bills.active': 'Active',
  'bills.order_id': 'Order ID', 'bills.description': 'Description', 'bills.name': 'Payment purpose',
  'bills.custom': 'Custom', 'bills.payer_pays_commission': 'Payer pays the commission',
  'bills.payment_method': 'Payment method', 'bills.any_method': 'Any', 'bills.currency_in': 'Currency',
  'bills.shop_default': 'Shop default', 'bills.link_page': 'Payment page', 'bills.link_qr': 'QR page',
  'bills.activate': 'Activate', 'bills.deactivate': 'Deactivate', 'bills.payments': 'Payments of this bill',
  'bills.created': 'Bill created.', 'bills.toggled': 'Bill activity changed.', 'bills.bill': 'Bill {id}',
  'bills.inactive': 'Inactive',
  'payments.title': 'Payments', 'payments.payment': 'Payment {id}', 'payments.bill': 'Bill',
  'payments.received': 'Received', 'payments.card': 'Card', 'payments.method': 'Method',
  'payments.commission': 'Commission', 'payments.credited': 'Credited to balance', 'payments.refunded': 'Refunded',
  'payments.refund': 'Refund', 'payments.refund_full': 'Refund in full', 'payments.refund_partial': 'Refund part',
  'payments.refund_amount': 'Refund amount', 'payments.refunds': 'Refunds', 'payments.refund_created': 'Refund created.',
  'payments.no_grant': 'Refunds are available on request through support.',
  'payouts.title': 'Payouts', 'payouts.new': 'New payout', 'payouts.account': 'Payout account',
  'payouts.commission': 'Commission', 'payouts.order_id': 'Order ID', 'payouts.created': 'Payout created.',
  'payouts.no_accounts': 'Add a payout account first.',
  'shops.title': 'Shops', 'shops.settings': 'Settings of {name}', 'shops.result_url': 'Result URL',
  'shops.success_url': 'Success URL', 'shops.fail_url': 'Fail URL', 'shops.default_currency': 'Default currency',
  'shops.enabled': 'Enabled', 'shops.test_postback': 'Send test postback', 'shops.test_result': 'Receiver answered',
  'shops.result_help': 'Receives the server-to-server payment postback.',
  'shops.test_sent': 'Test postback sent.',
  'hooks.title': 'Webhooks', 'hooks.url': 'Payout webhook URL', 'hooks.log': 'Delivery log',
  'hooks.kind': 'Kind', 'hooks.attempts': 'Attempts', 'hooks.target': 'URL', 'hooks.redeliver': 'Redeliver',
  'hooks.redelivered': 'Queued for redelivery.', 'hooks.attempt': 'Attempt', 'hooks.http': 'HTTP',
  'hooks.latency': 'Latency', 'hooks.reply': 'Reply', 'hooks.error': 'Error', 'hooks.last_error': 'Last error',
  'api.title': 'API integration', 'api.token': 'API token', 'api.issued_at': 'Current token issued',
  'api.hint': 'The token is shown only once, right after it is issued. Send it as "Authorization: Bearer <token>".',
  'api.refresh': 'Refresh API token', 'api.confirm_title': 'Refresh the API token?',
  'api.confirm_text': 'A new token is issued and the current token stops working at once. Every integration using it will get 401 until you update it.',
  'api.confirm': 'Yes, refresh the token', 'api.new_token': 'Your new API token. Copy it now: it will not be shown again.',
  'api.base_url': 'API base URL', 'api.ends_with': 'Token ending',
  'api.allowlist': 'IP allow-list', 'api.allowlist_label': 'Addresses and CIDR ranges, one per line (IPv4 or IPv6)',
  'api.allowlist_hint': 'When the list is not empty, the API answers requests with your token only from these addresses (others get 403 api:error.ip_access_denied). Leave it empty to allow any address.',
  'acc.title': 'Payout accounts', 'acc.new': 'Add payout account', 'acc.type': 'Type', 'acc.identifier': 'Card number or phone',
  'acc.card_holder': 'Cardholder name', 'acc.bank': 'SBP bank', 'acc.card': 'Card', 'acc.sbp': 'SBP',
  'acc.created': 'Payout account added.', 'acc.account': 'Account',
  'status.NEW': 'New', 'status.PROCESS': 'Processing', 'status.UNDERPAID': 'Underpaid', 'status.SUCCESS': 'Success',
  'status.OVERPAID': 'Overpaid', 'status.FAIL': 'Failed', 'status.MODERATING': 'Moderating', 'status.ERROR': 'Error',
  'status.DECLINED': 'Declined', 'status.PENDING': 'Pending', 'status.DELIVERED': 'Delivered', 'status.DEAD': 'Dead',
  'status.ACTIVE': 'Active', 'status.BANNED': 'Blocked',
  'error.not_found': 'Not found.', 'error.general': 'Something went wrong. Please try again.',
  'error.invalid_amount': 'Invalid amount.', 'error.merchant_banned': 'The merchant is blocked.',
  'error.merchant_not_found': 'Merchant not found.', 'error.merchant_subscription_inactive': 'Subscription is not active.',
  'error.merchant_subscription_not_found': 'The merchant has no subscription.',
  'error.merchant_not_verified': 'The merchant is not verified.', 'error.shop_not_found': 'Shop not found.',
  'error.shop_not_enabled': 'The shop or merchant is deactivated.', 'error.access_denied': 'No access to this shop.',
  'error.rate-not-found': 'No exchange rate for this currency.', 'error.bill_not_found': 'Bill not found.',
  'error.bill_is_finished': 'This bill is already paid and cannot be toggled.',
  'error.payment_not_found': 'Payment not found.', 'error.payout_not_found': 'Payout not found.',
  'error.payout_account_not_found': 'Payout account not found.', 'error.payout_account_banned': 'The payout account is blocked.',
  'error.daily_payout_limit_exceeded': 'Daily payout limit exceeded.', 'error.monthly_payout_limit_exceeded': 'Monthly payout limit exceeded.',
  'error.balance_not_enough': 'Not enough balance.', 'error.direction_not_available': 'This account cannot be used for this payout.',
  'error.unauthorized': 'This action is unauthorized.', 'error.too_many_payments': 'Too many payments.',
  'error.general_error': 'Internal error.', 'error.unsafe_url': 'The URL {reason}.',
  'error.required': 'This field is required.',
  'error.date': 'Use the form YYYY-MM-DD.',
};

type Key = keyof typeof en;

const ru: Record<Key, string> = {
  'app.title': 'Личный кабинет', 'nav.dashboard': 'Главная', 'nav.bills': 'Счета', 'nav.payments': 'Платежи',
  'nav.payouts': 'Выплаты', 'nav.shops': 'Магазины', 'nav.webhooks': 'Вебхуки', 'nav.api': 'API-интеграция',
  'nav.accounts': 'Счета для выплат', 'nav.team': 'Команда', 'nav.signout': 'Выйти', 'nav.menu': 'Меню', 'nav.skip': 'Перейти к содержимому',
  'nav.lang': 'Язык',
  'login.title': 'Вход', 'login.email': 'Эл. почта', 'login.password': 'Пароль', 'login.submit': 'Войти',
  'login.invalid': 'Неверная почта или пароль.',
  'login.throttled': 'Слишком много попыток входа. Попробуйте позже.',
  'login.banned': 'Аккаунт мерчанта заблокирован.',
  'login.expired': 'Сессия истекла. Войдите снова.', 'login.signedout': 'Вы вышли из кабинета.',
  'csrf.invalid': 'Форма устарела. Обновите страницу и попробуйте снова.',
  'common.save': 'Сохранить', 'common.create': 'Создать', 'common.cancel': 'Отмена', 'common.filter': 'Показать',
  'common.reset': 'Сбросить', 'common.prev': 'Назад', 'common.next': 'Вперёд', 'common.none': 'Пока ничего нет.',
  'common.id': 'ID', 'common.status': 'Статус', 'common.amount': 'Сумма', 'common.currency': 'Валюта',
  'common.created': 'Создан', 'common.shop': 'Магазин', 'common.all': 'Все', 'common.from': 'С', 'common.to': 'По',
  'common.yes': 'Да', 'common.no': 'Нет', 'common.details': 'Подробнее', 'common.copy': 'Копировать',
  'common.copied': 'Скопировано', 'common.saved': 'Сохранено.', 'common.readonly': 'Это действие пока недоступно.',
  'common.back': 'Назад', 'common.page': 'Страница {n}', 'common.actions': 'Действия', 'common.optional': 'необязательно',
  'common.fix': 'Исправьте отмеченные поля.',
  'dash.title': 'Главная', 'dash.balances': 'Балансы', 'dash.available': 'Доступно', 'dash.locked': 'Заблокировано',
  'dash.hold': 'Удержано (комиссии)', 'dash.turnover': 'Оборот за 30 дней', 'dash.latest': 'Последние платежи',
  'dash.chart_label': 'Оборот по дням за последние 30 дней, всего {total}',
  'bills.title': 'Счета', 'bills.new': 'Новый счёт', 'bills.type': 'Тип', 'bills.active': 'Активен',
  'bills.order_id': 'Номер заказа', 'bills.description': 'Описание', 'bills.name': 'Назначение платежа',
  'bills.custom': 'Произвольное поле', 'bills.payer_pays_commission': 'Комиссию платит плательщик',
  'bills.payment_method': 'Способ оплаты', 'bills.any_method': 'Любой', 'bills.currency_in': 'Валюта',
  'bills.shop_default': 'Валюта магазина', 'bills.link_page': 'Платёжная страница', 'bills.link_qr': 'Страница с QR',
  'bills.activate': 'Включить', 'bills.deactivate': 'Отключить', 'bills.payments': 'Платежи по счёту',
  'bills.created': 'Счёт создан.', 'bills.toggled': 'Активность счёта изменена.', 'bills.bill': 'Счёт {id}',
  'bills.inactive': 'Отключён',
  'payments.title': 'Платежи', 'payments.payment': 'Платёж {id}', 'payments.bill': 'Счёт',
  'payments.received': 'Получено', 'payments.card': 'Карта', 'payments.method': 'Способ',
  'payments.commission': 'Комиссия', 'payments.credited': 'Зачислено на баланс', 'payments.refunded': 'Возвращено',
  'payments.refund': 'Возврат', 'payments.refund_full': 'Вернуть полностью', 'payments.refund_partial': 'Вернуть часть',
  'payments.refund_amount': 'Сумма возврата', 'payments.refunds': 'Возвраты', 'payments.refund_created': 'Возврат создан.',
  'payments.no_grant': 'Возвраты подключаются по запросу в поддержку.',
  'payouts.title': 'Выплаты', 'payouts.new': 'Новая выплата', 'payouts.account': 'Счёт для выплаты',
  'payouts.commission': 'Комиссия', 'payouts.order_id': 'Номер заказа', 'payouts.created': 'Выплата создана.',
  'payouts.no_accounts': 'Сначала добавьте счёт для выплат.',
  'shops.title': 'Магазины', 'shops.settings': 'Настройки «{name}»', 'shops.result_url': 'Result URL',
  'shops.success_url': 'Success URL', 'shops.fail_url': 'Fail URL', 'shops.default_currency': 'Валюта по умолчанию',
  'shops.enabled': 'Включён', 'shops.test_postback': 'Отправить тестовый постбэк', 'shops.test_result': 'Ответ получателя',
  'shops.result_help': 'Сюда приходит серверное уведомление о платеже (постбэк).',
  'shops.test_sent': 'Тестовый постбэк отправлен.',
  'hooks.title': 'Вебхуки', 'hooks.url': 'URL вебхука выплат', 'hooks.log': 'Журнал доставки',
  'hooks.kind': 'Тип', 'hooks.attempts': 'Попытки', 'hooks.target': 'URL', 'hooks.redeliver': 'Отправить снова',
  'hooks.redelivered': 'Поставлено в очередь на повторную отправку.', 'hooks.attempt': 'Попытка', 'hooks.http': 'HTTP',
  'hooks.latency': 'Задержка', 'hooks.reply': 'Ответ', 'hooks.error': 'Ошибка', 'hooks.last_error': 'Последняя ошибка',
  'api.title': 'API-интеграция', 'api.token': 'API-токен', 'api.issued_at': 'Текущий токен выпущен',
  'api.hint': 'Токен показывается один раз, сразу после выпуска. Передавайте его в заголовке «Authorization: Bearer <токен>».',
  'api.refresh': 'Обновить API-токен', 'api.confirm_title': 'Обновить API-токен?',
  'api.confirm_text': 'Будет выпущен новый токен, а текущий сразу перестанет работать. Все интеграции с ним будут получать 401, пока вы их не обновите.',
  'api.confirm': 'Да, обновить токен', 'api.new_token': 'Ваш новый API-токен. Скопируйте его сейчас: больше он показан не будет.',
  'api.base_url': 'Базовый адрес API', 'api.ends_with': 'Окончание токена',
  'api.allowlist': 'Разрешённые IP-адреса', 'api.allowlist_label': 'Адреса и диапазоны CIDR, по одному в строке (IPv4 или IPv6)',
  'api.allowlist_hint': 'Если список не пуст, API принимает запросы с вашим токеном только с этих адресов (остальные получают 403 api:error.ip_access_denied). Оставьте пустым, чтобы разрешить любой адрес.',
  'acc.title': 'Счета для выплат', 'acc.new': 'Добавить счёт для выплат', 'acc.type': 'Тип',
  'acc.identifier': 'Номер карты или телефона', 'acc.card_holder': 'Имя держателя карты', 'acc.bank': 'Банк СБП',
  'acc.card': 'Карта', 'acc.sbp': 'СБП', 'acc.created': 'Счёт для выплат добавлен.', 'acc.account': 'Счёт',
  'status.NEW': 'Новый', 'status.PROCESS': 'В обработке', 'status.UNDERPAID': 'Недоплата', 'status.SUCCESS': 'Успешно',
  'status.OVERPAID': 'Переплата', 'status.FAIL': 'Ошибка', 'status.MODERATING': 'На модерации', 'status.ERROR': 'Сбой',
  'status.DECLINED': 'Отклонено', 'status.PENDING': 'В очереди', 'status.DELIVERED': 'Доставлено', 'status.DEAD': 'Не доставлено',
  'status.ACTIVE': 'Активен', 'status.BANNED': 'Заблокирован',
  'error.not_found': 'Не найдено.', 'error.general': 'Что-то пошло не так. Попробуйте ещё раз.',
  'error.invalid_amount': 'Неверная сумма.', 'error.merchant_banned': 'Мерчант заблокирован.',
  'error.merchant_not_found': 'Мерчант не найден.', 'error.merchant_subscription_inactive': 'Подписка не активна.',
  'error.merchant_subscription_not_found': 'У мерчанта нет подписки.',
  'error.merchant_not_verified': 'Мерчант не верифицирован.', 'error.shop_not_found': 'Магазин не найден.',
  'error.shop_not_enabled': 'Магазин или мерчант отключён.', 'error.access_denied': 'Нет доступа к магазину.',
  'error.rate-not-found': 'Нет курса для этой валюты.', 'error.bill_not_found': 'Счёт не найден.',
  'error.bill_is_finished': 'Счёт уже оплачен, его нельзя переключить.',
  'error.payment_not_found': 'Платёж не найден.', 'error.payout_not_found': 'Выплата не найдена.',
  'error.payout_account_not_found': 'Счёт для выплат не найден.', 'error.payout_account_banned': 'Счёт для выплат заблокирован.',
  'error.daily_payout_limit_exceeded': 'Превышен дневной лимит выплат.', 'error.monthly_payout_limit_exceeded': 'Превышен месячный лимит выплат.',
  'error.balance_not_enough': 'Недостаточно средств на балансе.', 'error.direction_not_available': 'Этот счёт нельзя использовать для выплаты.',
  'error.unauthorized': 'Действие не разрешено.', 'error.too_many_payments': 'Слишком много платежей.',
  'error.general_error': 'Внутренняя ошибка.', 'error.unsafe_url': 'URL: {reason}.',
  'error.required': 'Обязательное поле.',
  'error.date': 'Укажите дату в виде ГГГГ-ММ-ДД.',
};

const DICTS: Record<Lang, Record<string, string>> = { en, ru };

export type T = (key: string, vars?: Record<string, string | number>) => string;

export function translator(lang: Lang): T {
  const d = DICTS[lang];
  return (key, vars) => {
    let s = d[key] ?? en[key as Key] ?? key;
    if (vars) for (const [k, val] of Object.entries(vars)) s = s.replaceAll(`{${k}}`, String(val));
    return s;
  };
}

/** `?lang=` (remembered in a cookie), then the cookie, then Accept-Language; English otherwise. */
export function pickLang(req: FastifyRequest): { lang: Lang; fromQuery: boolean } {
  const q = (req.query as Record<string, unknown> | undefined)?.lang;
  if (q === 'ru' || q === 'en') return { lang: q, fromQuery: true };
  const c = req.cookies?.cab_lang;
  if (c === 'ru' || c === 'en') return { lang: c, fromQuery: false };
  const al = String(req.headers['accept-language'] ?? '');
  const first = al.split(',').map((p) => p.trim().toLowerCase()).find((p) => /^(ru|en)\b/.test(p));
  return { lang: first?.startsWith('ru') ? 'ru' : 'en', fromQuery: false };
}

/** Validation messages of the services are English (Laravel style); the Russian cabinet words the common ones. */
export function fieldMessage(lang: Lang, msg: string): string {
  if (lang === 'en') return msg;
  if (/field is required\.$/.test(msg)) return 'Обязательное поле.';
  if (/must be a number\.$/.test(msg)) return 'Должно быть числом.';
  if (/must be an integer\.$/.test(msg)) return 'Должно быть целым числом.';
  if (/selected .* is invalid\.$/.test(msg)) return 'Недопустимое значение.';
  if (/may not be greater than (\d+) characters\.$/.test(msg)) return `Не длиннее ${/(\d+) characters/.exec(msg)![1]} символов.`;
  if (/format is invalid\.$/.test(msg)) return 'Неверный формат.';
  return msg;
}
