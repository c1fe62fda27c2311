/**
 * The report as a PDF: the HTML printed by the system's Chromium (headless, its print stylesheet: A4, headers
 * repeated, no navigation). No browser is bundled: PERKS_CHROMIUM names one, else the usual Debian paths and PATH.
 * Written to a temporary file and renamed, like the other formats.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { commitDurably, tempPathFor } from '../../shared/durable-file.js';
import { ExitCode, UserFacingError } from '../../shared/exit-codes.js';

/** No Chromium where --format pdf needs one: a missing prerequisite, exit 2 (install it, or name it). */
export class ChromiumMissingError extends UserFacingError {
  constructor(message: string) {
    super(message, ExitCode.config);
  }
}

const INSTALL = 'install it (Debian/Ubuntu: `apt-get install chromium`) or set PERKS_CHROMIUM to its path';

/**
 * The Chromium to print with: `named` (PERKS_CHROMIUM, read by src/config) when set, and then only it; else the
 * first one found on the usual paths and the system's PATH (`searchPath`, the executable search path, not a
 * setting of the program: read here, the one exception scripts/check-layers.mjs names for this file).
 */
export function findChromium(named: string | undefined, searchPath: string | undefined = process.env.PATH): string {
  if (named) {
    if (executable(named)) return named;
    throw new ChromiumMissingError(
      `PERKS_CHROMIUM=${JSON.stringify(named)} is not an executable file: --format pdf prints with Chromium; ${INSTALL}`,
    );
  }
  const path = (searchPath ?? '').split(delimiter).filter(Boolean);
  const candidates = [
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    ...['chromium', 'chromium-browser', 'google-chrome'].flatMap((name) => path.map((dir) => join(dir, name))),
  ];
  const found = candidates.find(executable);
  if (found) return found;
  throw new ChromiumMissingError(`--format pdf prints with Chromium, and none was found: ${INSTALL}`);
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Prints `html` to `file` (A4, the stylesheet's print rules) with `chromium`. */
export async function printPdf(chromium: string, html: string, file: string): Promise<void> {
  // A profile of its own, so a Chromium the user has open is not disturbed, and the page from a file of its own.
  const scratch = await mkdtemp(join(tmpdir(), 'perks-pdf-'));
  const temp = tempPathFor(file);
  try {
    const page = join(scratch, 'report.html');
    await writeFile(page, html, 'utf8');
    await promisify(execFile)(
      chromium,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-pdf-header-footer', // no date and file path printed on every page
        `--user-data-dir=${join(scratch, 'profile')}`,
        `--print-to-pdf=${temp}`,
        pathToFileURL(page).href,
      ],
      { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
    );
    const head = await readFile(temp).then((b) => b.subarray(0, 5).toString('latin1'));
    if (head !== '%PDF-') throw new Error('the file it wrote is not a PDF');
    await commitDurably(temp, file);
  } catch (err) {
    await rm(temp, { force: true });
    const why = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    throw new UserFacingError(`Chromium (${chromium}) could not print the report to PDF: ${why}`, ExitCode.failed, {
      cause: err,
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
