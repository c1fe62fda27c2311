/**
 * A test file's sandboxes, started and closed by its hooks: one for the whole file, one of its own for each
 * test, or one a test starts itself. Each is testSandbox(options) (sandbox.ts); the functions the first two
 * return give the running one, inside a hook or a test.
 */
import { afterAll, beforeAll, beforeEach, onTestFinished } from 'vitest';
import type { Sandbox, SandboxOptions } from '../../src/sandbox/index.js';
import { testSandbox } from './sandbox.js';

/** One sandbox for the file: started before its first test (and before the hooks declared after this call), closed after its last. */
export function sandboxForFile(options: SandboxOptions = {}): () => Sandbox {
  let sandbox: Sandbox | undefined;
  beforeAll(async () => {
    sandbox = await testSandbox(options);
  });
  afterAll(async () => {
    await sandbox?.close();
  });
  return () => running(sandbox);
}

/** A sandbox of its own for each test (the same facts get the same ids, so such tests must not share a platform). */
export function sandboxForEachTest(options: SandboxOptions = {}): () => Sandbox {
  let current: Sandbox | undefined;
  beforeEach(async () => {
    current = await sandboxForTest(options);
  });
  return () => running(current);
}

/** A sandbox for the running test, closed when the test has finished (passed or not). */
export async function sandboxForTest(options: SandboxOptions = {}): Promise<Sandbox> {
  const sandbox = await testSandbox(options);
  onTestFinished(() => sandbox.close());
  return sandbox;
}

function running(sandbox: Sandbox | undefined): Sandbox {
  if (!sandbox) throw new Error('the sandbox is not started: read it inside a hook or a test');
  return sandbox;
}
