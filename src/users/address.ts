/** How a command names one user: exactly one of --id, --email, --uid, to the API's {identifier}/{identifier_value}. */
import type { Identifier } from '../resources/user.js';
import { UsersInputError } from './errors.js';

export interface Address {
  identifier: Identifier;
  value: string;
}

export interface AddressFlags {
  id?: string | number;
  email?: string;
  uid?: string;
}

export function addressOf(flags: AddressFlags): Address {
  const given = (['id', 'email', 'uid'] as const).filter(
    (k) => flags[k] !== undefined && String(flags[k]).trim() !== '',
  );
  if (given.length !== 1) {
    throw new UsersInputError(
      given.length
        ? `name the user once: ${given.map((g) => `--${g}`).join(' and ')} given, expected exactly one of --id, --email, --uid`
        : 'name the user: --id <platform id>, --email <address> or --uid <your UID>',
    );
  }
  const key = given[0];
  const value = String(flags[key]).trim();
  if (key === 'id' && !(/^[1-9]\d*$/.test(value) && Number.isSafeInteger(Number(value))))
    throw new UsersInputError(
      `--id=${JSON.stringify(value)} is invalid: expected a platform user id, a whole number above 0`,
    );
  if (key === 'email' && !/^[^\s@]+@[^\s@]+$/.test(value))
    throw new UsersInputError('--email is invalid: expected an e-mail address (name@example.com)');
  return { identifier: key === 'uid' ? 'UID' : key, value };
}

export const pathOf = (a: Address) => ({ identifier: a.identifier, identifier_value: a.value });
