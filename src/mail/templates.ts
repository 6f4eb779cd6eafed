import { formatMoney } from '../lib/money-format.js';

/**
 * The texts of outgoing mail (plain text, English). Each gives the subject and the body; links
 * are absolute (PUBLIC_BASE_URL). A mail never carries a password or an API token: at most a
 * one-time link, which works once and for a limited time.
 */
export interface MailText { subject: string; text: string }

const ROLE_WORDS: Record<string, string> = { OWNER: 'owner', DEVELOPER: 'developer', ACCOUNTANT: 'accountant', SUPPORT: 'support' };

const signOff = '\n\n-- \nThis message was sent by the payment service. If you did not expect it, tell your account manager.';

export const mailTexts = {
  passwordReset: (link: string, minutes: number): MailText => ({
    subject: 'Set a new password for your merchant cabinet',
    text: `A password reset for your merchant cabinet was requested through our support.\n\n` +
      `Open this link to choose a new password (it works once, for ${minutes} minutes):\n\n${link}\n\n` +
      `Setting the new password signs your account out everywhere. If you did not ask for this, ignore this message: your password stays as it is.${signOff}`,
  }),

  /** A cabinet account asked for a reset on the sign-in page ("Forgot password?"). */
  passwordResetAsked: (link: string, minutes: number): MailText => ({
    subject: 'Set a new password for your merchant cabinet',
    text: `Someone (we hope you) asked for a new password for your merchant cabinet on its sign-in page.\n\n` +
      `Open this link to choose a new password (it works once, for ${minutes} minutes):\n\n${link}\n\n` +
      `Setting the new password signs your account out everywhere. If you did not ask for this, ignore this message: your password stays as it is.${signOff}`,
  }),

  operatorPasswordReset: (link: string, minutes: number, by: 'self' | 'admin' | 'invite'): MailText => ({
    subject: by === 'invite' ? 'You were invited to the operator console' : 'Set a new password for the operator console',
    text: ({
      self: 'Someone (we hope you) asked for a new password for the operator console on its sign-in page.\n\n',
      admin: 'An administrator sent you a password reset for the operator console.\n\n',
      invite: 'An administrator invited you to the operator console of the payment service.\n\n',
    })[by] +
      `Open this link to choose ${by === 'invite' ? 'your' : 'a new'} password (it works once, for ${minutes >= 1440 ? `${minutes / 1440} days` : `${minutes} minutes`}):\n\n${link}\n\n` +
      `Setting the new password signs you out of every console session; your two-factor sign-in stays as it is. If you did not ask for this, ignore this message and tell an administrator.${signOff}`,
  }),

  /** Names the merchant: an invitee who does not know who invites them cannot trust the link. */
  teamInvite: (link: string, role: string, days: number, merchantName: string): MailText => ({
    subject: `You were invited to the merchant cabinet of ${merchantName}`,
    text: `You were invited to the merchant cabinet of ${merchantName} with the role "${ROLE_WORDS[role.toUpperCase()] ?? role}".\n\n` +
      `Open this link to set your password (it works once, for ${days} days):\n\n${link}${signOff}`,
  }),

  /**
   * The owner of a new merchant who signs in with the merchant's own contact address (a sole
   * trader). Names the merchant, as the team invitation does: a link from an unnamed sender is not trusted.
   */
  ownerLoginInvite: (link: string, minutes: number, merchantName: string): MailText => ({
    subject: `Your merchant cabinet of ${merchantName} is ready`,
    text: `The merchant cabinet of ${merchantName} was opened for you; you sign in to it with this address.\n\n` +
      `Open this link to set your password (it works once, for ${Math.round(minutes / (24 * 60))} days):\n\n${link}${signOff}`,
  }),

  twoFactorOn: (): MailText => ({
    subject: 'Two-factor sign-in was turned on',
    text: `Two-factor sign-in was turned on for your merchant cabinet account. Every other session was signed out.${signOff}`,
  }),

  twoFactorOff: (): MailText => ({
    subject: 'Two-factor sign-in was turned off',
    text: `Two-factor sign-in was turned off for your merchant cabinet account: a password alone now opens it.${signOff}`,
  }),

  twoFactorReset: (): MailText => ({
    subject: 'Two-factor sign-in was reset by support',
    text: `At your request our support turned off two-factor sign-in for your merchant cabinet account and signed it out everywhere. ` +
      `The next sign-in asks only for the password; turn two-factor sign-in on again on the Security page.${signOff}`,
  }),

  payoutApproved: (p: { id: string; amount: string; currency: string }): MailText => ({
    subject: `Payout ${p.id} approved`,
    text: `Your payout ${p.id} of ${formatMoney(p.amount, 'en', p.currency)} passed moderation and is being sent.${signOff}`,
  }),

  payoutDeclined: (p: { id: string; amount: string; currency: string; reason: string }): MailText => ({
    subject: `Payout ${p.id} declined`,
    text: `Your payout ${p.id} of ${formatMoney(p.amount, 'en', p.currency)} was declined at moderation: ${p.reason}\n` +
      `The amount and its commission are back on your available balance.${signOff}`,
  }),
};
