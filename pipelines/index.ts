/** Every stream, in dependency order. */
import groups from './groups.js';
import users from './users.js';
import offers from './offers.js';
import orders from './orders.js';
import redemptionStats from './redemption-stats.js';
import credit from './credit.js';
import interactions from './interactions.js';

export const streams = [groups, users, offers, orders, redemptionStats, credit, interactions];
