/**
 * The month's state in the help texts: the words of the marts, the report and `perks status` (partial, provisional,
 * final, signed off). "Closed" is the act of `perks close` (a month signed off), never the data's final: `perks run`
 * reports "the last final month", and no help calls a month closed. Each command's --help as yargs prints it.
 */
import yargs from 'yargs';
import { expect, test } from 'vitest';
import { commands } from '../../src/commands/index.js';

const names = commands.map((c) => String(Array.isArray(c.command) ? c.command[0] : c.command).split(' ')[0]);

/** `perks <name> --help`, unwrapped. */
function help(name: string): Promise<string> {
  return new Promise((resolve) => {
    void yargs()
      .scriptName('perks')
      .command(commands as never)
      .exitProcess(false)
      .wrap(null)
      .help()
      .parse([name, '--help'], (_err: unknown, _argv: unknown, output: string) => resolve(output));
  });
}

test('no help text calls a month closed; run reports the last final month; close and status name the states', async () => {
  const texts = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await help(n)] as const)));
  expect(Object.keys(texts).length).toBeGreaterThan(15);
  for (const [name, text] of Object.entries(texts)) {
    expect(text, name).toContain(`perks ${name}`);
    expect(text, name).not.toMatch(/closed months?\b/i);
  }
  expect(texts.run).toContain('report the last final month');
  expect(texts.run).toMatch(/--month +report month YYYY-MM \(default: the last month final for every group/);
  expect(texts.close).toMatch(/--force +sign off a partial or provisional month anyway/);
  expect(texts.status).toContain("each month's state (partial, provisional, final, signed off)");
});
