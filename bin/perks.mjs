#!/usr/bin/env node
// The `perks` CLI: runs the TypeScript sources through tsx, so `npx perks` works right after `npm ci`.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
