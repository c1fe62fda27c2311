/** One rule of retrying: the table of outcomes says which errors are worth another attempt, and ApiError reads it. */
import { expect, test } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { ACTIONS, kindOfStatus, type ApiErrorKind } from '../../src/api/outcomes.js';
import { ExitCode, InputError, UserFacingError } from '../../src/shared/exit-codes.js';

test('an HTTP status is one kind of outcome, and each kind one action', () => {
  expect([401, 429, 400, 422, 403, 404, 500, 503].map(kindOfStatus)).toEqual([
    'authentication',
    'throttled',
    'validation',
    'validation',
    'client',
    'client',
    'server',
    'server',
  ]);
  const retried = (Object.keys(ACTIONS) as ApiErrorKind[]).filter((k) => ACTIONS[k] === 'retry').sort();
  expect(retried).toEqual(['network', 'parse', 'server', 'throttled', 'timeout']);
});

test('an ApiError is transient exactly when the table retries its kind', () => {
  for (const kind of Object.keys(ACTIONS) as ApiErrorKind[])
    expect(new ApiError(kind, 'listUsers', 'x').transient, kind).toBe(ACTIONS[kind] === 'retry');
});

test('the kinds of error a person acts on: user input exits 2, refused credentials 3, other failures 1', () => {
  class MonthInputError extends InputError {}
  const input = new MonthInputError('--month=13 is invalid');
  expect(input).toBeInstanceOf(UserFacingError);
  expect([input.exitCode, input.name, input.message]).toEqual([
    ExitCode.config,
    'MonthInputError',
    '--month=13 is invalid',
  ]);
  expect(new ApiError('authentication', 'token', 'refused').exitCode).toBe(ExitCode.auth);
  expect(new ApiError('server', 'listUsers', 'HTTP 500').exitCode).toBe(ExitCode.failed);
  expect(new UserFacingError('disk full').exitCode).toBe(ExitCode.failed);
});
