import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { defineInput, requestInput, v } from '../../lib/input.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { RATE_CURRENCIES, type RateCurrency } from '../../domain/rate/rate.service.js';
import { decimalField, Errors } from '../../lib/input-fields.js';
import { rateView } from '../../domain/operator-views.js';
import { actorOf, writeAudit } from '../../audit/audit.js';
import { list, ok, RateSchema } from './schemas.js';

const CurrencyParams = Type.Object({ currency: Type.String({ enum: [...RATE_CURRENCIES] }) });
const SetInput = defineInput({ rub_per_unit: v.decimal({ required: true, places: 6, description: 'RUB per one unit, positive, at most 6 decimals' }) });

const asRateCurrency = (s: string): RateCurrency | null => RATE_CURRENCIES.find((c) => c === s.toUpperCase()) ?? null;

const tags = ['admin'];

/** Operator API: exchange rates for USD/EUR bills (the payer pays RUB at this rate). */
export default async function rateAdminRoutes(app: FastifyInstance): Promise<void> {
  const { rates } = app.services;

  app.get('/rates', { schema: { tags, summary: 'Every exchange rate set', response: { 200: list(RateSchema, 'The rates') } } }, async () => (
    { success: true, data: (await rates.list()).map((r) => rateView(app.config, r)) }
  ));

  app.put<{ Params: { currency: string } }>('/rates/:currency', {
    schema: { tags, summary: 'Set the rate of USD or EUR in RUB per unit', params: CurrencyParams, body: SetInput.schema, response: { 200: ok(RateSchema.properties, 'The rate as set') } },
  }, async (req) => {
    const currency = asRateCurrency(req.params.currency);
    const errors = new Errors();
    if (!currency) errors.add('currency', 'The selected currency is invalid (USD or EUR).');
    let input: ReturnType<typeof SetInput.parse> | null = null;
    try { input = SetInput.parse(requestInput(req)); } catch (e) {
      if (!(e instanceof ValidationError)) throw e;
      for (const [k, msgs] of Object.entries(e.errors)) for (const m of msgs) errors.add(k, m);
    }
    const rate = input ? decimalField(errors, 'rub_per_unit', input.rub_per_unit!.toFixed(), { min: 0, exclusive: true, max: '999999999999.999999', places: 6 }) : null;
    errors.throwIfAny();
    const who = actorOf(req);
    const saved = await rates.set(currency!, rate!, (c, r) => writeAudit(c, who, {
      action: 'rate.set', objectType: 'rate', objectId: currency!, before: r.before === null ? null : { rub_per_unit: r.before }, after: { rub_per_unit: r.after },
    }));
    return { success: true, ...rateView(app.config, saved) };
  });

  app.delete<{ Params: { currency: string } }>('/rates/:currency', {
    schema: { tags, summary: 'Remove a rate: bills in that currency then answer rate-not-found', params: CurrencyParams,
      response: { 200: ok({ currency: Type.String({ enum: ['USD', 'EUR'] }), deleted: Type.Literal(true) }, 'The rate is gone') } },
  }, async (req) => {
    const currency = asRateCurrency(req.params.currency);
    if (!currency) throw new NotFoundError('Rate not found.');
    const who = actorOf(req);
    await rates.remove(currency, (c, r) => writeAudit(c, who, {
      action: 'rate.delete', objectType: 'rate', objectId: currency, before: { rub_per_unit: r.before }, after: null,
    }));
    return { success: true, currency, deleted: true };
  });
}
