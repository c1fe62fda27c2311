/** The organisation's groups: different timezones (one with DST in each hemisphere), currencies and locales. */
import { ORGANISATION_CLIENT_ID } from '../choices.js';

export interface GroupRecord {
  id: number;
  name: string;
  display_name: string;
  sandbox: boolean;
  locale: string;
  timezone: string;
  custom_domain: string | null;
  subdomain: string;
  currency: string;
  /** A second currency a few of the group's orders are paid in. */
  secondCurrency: string | null;
  /** Share of users and orders. */
  weight: number;
  /** The group-level credential's client_id. */
  clientId: number;
}

export const GROUPS: readonly GroupRecord[] = [
  {
    id: 11,
    name: 'acme-uk',
    display_name: 'Acme Rewards UK',
    sandbox: false,
    locale: 'en_GB',
    timezone: 'Europe/London',
    custom_domain: 'perks.acme.co.uk',
    subdomain: 'acme-uk',
    currency: 'GBP',
    secondCurrency: 'EUR',
    weight: 0.4,
    clientId: 101,
  },
  {
    id: 12,
    name: 'acme-us',
    display_name: 'Acme Rewards US',
    sandbox: false,
    locale: 'en_US',
    timezone: 'America/New_York',
    custom_domain: null,
    subdomain: 'acme-us',
    currency: 'USD',
    secondCurrency: null,
    weight: 0.32,
    clientId: 102,
  },
  {
    id: 13,
    name: 'acme-au',
    display_name: 'Acme Rewards Australia',
    sandbox: false,
    locale: 'en_AU',
    timezone: 'Australia/Sydney',
    custom_domain: null,
    subdomain: 'acme-au',
    currency: 'AUD',
    secondCurrency: null,
    weight: 0.22,
    clientId: 103,
  },
  {
    id: 14,
    name: 'acme-staff-sandbox',
    display_name: 'Acme Staff (test)',
    sandbox: true,
    locale: 'fr_FR',
    timezone: 'Europe/Paris',
    custom_domain: null,
    subdomain: 'acme-staff',
    currency: 'EUR',
    secondCurrency: null,
    weight: 0.06,
    clientId: 104,
  },
];

export const CURRENCIES = ['GBP', 'USD', 'AUD', 'EUR'] as const;

export { ORGANISATION_CLIENT_ID };
