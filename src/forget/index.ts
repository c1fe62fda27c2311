/** Forgetting users: their personal values cleared from every file of the output directory. */
export { forgetUsers, forgetAnonymised, type ForgetResult, type ForgetOptions } from './forget.js';
export { anonymisedUsers, identitiesOf, type Identities } from './identities.js';
export { PERSONAL_COLUMNS, type PersonalColumns } from './personal-columns.js';
export { ForgetInputError } from './errors.js';
