/** Every operation's handler, by operation name: the table is checked complete against operations.ts. */
import type { OperationName } from '../../resources/operations.js';
import { catalogueHandlers } from './catalogue.js';
import type { OpHandler } from './context.js';
import { creditHandlers } from './credit.js';
import { interactionHandlers } from './interactions.js';
import { lifecycleHandlers } from './lifecycle.js';
import { orderHandlers } from './orders.js';
import { statsHandlers } from './stats.js';
import { userHandlers } from './users.js';

export const handlers: Record<Exclude<OperationName, 'token'>, OpHandler> = {
  ...userHandlers,
  ...lifecycleHandlers,
  ...catalogueHandlers,
  ...orderHandlers,
  ...statsHandlers,
  ...creditHandlers,
  ...interactionHandlers,
};

export type { OpContext, OpHandler, OpResult, SandboxState } from './context.js';
export { LoginUrls } from './login-urls.js';
export type { Page } from './pagination.js';
