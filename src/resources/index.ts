/** The API resources, declared once (zod): types, tolerant decoding, sandbox encoding and lake column types. */
export * from './codecs.js';
export * from './envelope.js';
export * from './auth.js';
export * from './group.js';
export * from './user.js';
export * from './offer.js';
export * from './order.js';
export * from './credit.js';
export * from './redemption-stats.js';
export * from './interaction.js';
export * from './operations.js';
