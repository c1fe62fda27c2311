/**
 * Write-back settings: which interaction_type each kind of event is sent as (PERKS_WRITEBACK_TYPES, parsed in
 * src/config with every other setting; the command's --types flag goes through the same parser).
 */
export { parseTypeMap, TYPES_ENV, type TypeMap } from '../config/writeback-types.js';
