/**
 * OpenLineage's settings, read as OpenLineage's own clients read them (so an operator sets them the way they
 * know): OPENLINEAGE_URL (+ OPENLINEAGE_ENDPOINT, OPENLINEAGE_API_KEY sent as a bearer), OPENLINEAGE_NAMESPACE,
 * OPENLINEAGE_DISABLED, and the transport's own variables (OPENLINEAGE__TRANSPORT__TYPE=file with
 * OPENLINEAGE__TRANSPORT__LOG_FILE_PATH: one JSON event per line, for CI artifacts; …__TIMEOUT in seconds).
 * Fields of the one ConfigSchema; `lineageTransportOf` says, once per command, where the events go (or that none
 * are sent: nothing set, nothing changes). docs/reference/lineage.md.
 */
import { z } from 'zod';
import { ConfigError } from '../shared/exit-codes.js';
import { DEFAULTS } from './defaults.js';

const TIMEOUT_MESSAGE = `expected a number of seconds above 0, at most 60 (default ${DEFAULTS.lineage.timeoutSeconds})`;

export const LINEAGE_SETTINGS = {
  /** The collector's base URL (Marquez: http://host:5000; DataHub: http://gms:8080/openapi/openlineage/). */
  openlineageUrl: z
    .string()
    .trim()
    .refine((u) => /^https?:\/\/[^/?#]/i.test(u) && URL.canParse(u), {
      message: 'expected an http(s) URL, e.g. http://localhost:5000',
      abort: true,
    })
    .refine(
      (u) => !new URL(u).username && !new URL(u).password,
      'expected no user or password in the URL: set OPENLINEAGE_API_KEY',
    )
    .optional(),
  /** The path the events are posted to, below the URL (OpenLineage's clients: api/v1/lineage). */
  openlineageEndpoint: z
    .string()
    .trim()
    .refine((p) => !/[?#\s]/.test(p), 'expected a path such as api/v1/lineage')
    .default(DEFAULTS.lineage.endpoint),
  /** Sent as `Authorization: Bearer …`; never printed (registered with the redaction). */
  openlineageApiKey: z.string().min(1, 'must not be empty').optional(),
  /** The jobs' namespace. */
  openlineageNamespace: z.string().trim().min(1, 'must not be blank').default(DEFAULTS.lineage.namespace),
  /** true: nothing is sent, whatever else is set (as OpenLineage's clients read it). */
  openlineageDisabled: z
    .string()
    .trim()
    .toLowerCase()
    .refine((v) => ['1', 'true', '0', 'false'].includes(v), 'expected true or false')
    .transform((v) => v === '1' || v === 'true')
    .default(false),
  /** http (with OPENLINEAGE_URL) or file (with the log file's path). */
  openlineageTransportType: z.enum(['http', 'file'], { error: 'expected http or file' }).optional(),
  openlineageTransportLogFilePath: z.string().min(1, 'must not be empty').optional(),
  /** Seconds one event may take to post before lineage gives up for the command. */
  openlineageTransportTimeout: z.coerce
    .number({ error: TIMEOUT_MESSAGE })
    .positive(TIMEOUT_MESSAGE)
    .max(60, TIMEOUT_MESSAGE)
    .default(DEFAULTS.lineage.timeoutSeconds),
};

export const LINEAGE_ENV_NAMES = {
  openlineageUrl: 'OPENLINEAGE_URL',
  openlineageEndpoint: 'OPENLINEAGE_ENDPOINT',
  openlineageApiKey: 'OPENLINEAGE_API_KEY',
  openlineageNamespace: 'OPENLINEAGE_NAMESPACE',
  openlineageDisabled: 'OPENLINEAGE_DISABLED',
  openlineageTransportType: 'OPENLINEAGE__TRANSPORT__TYPE',
  openlineageTransportLogFilePath: 'OPENLINEAGE__TRANSPORT__LOG_FILE_PATH',
  openlineageTransportTimeout: 'OPENLINEAGE__TRANSPORT__TIMEOUT',
} as const satisfies Record<keyof typeof LINEAGE_SETTINGS, string>;

type LineageFields = z.infer<z.ZodObject<typeof LINEAGE_SETTINGS>>;

/** Where the events of a command go: nowhere, a collector over HTTP, or a file of JSON lines. */
export type LineageTransport =
  | { kind: 'none' }
  | { kind: 'http'; url: string; apiKey?: string; timeoutMs: number; namespace: string }
  | { kind: 'file'; path: string; namespace: string };

/** The transport the settings name; a file transport without its path is one line naming the variables (exit 2). */
export function lineageTransportOf(settings: LineageFields): LineageTransport {
  if (settings.openlineageDisabled) return { kind: 'none' };
  const namespace = settings.openlineageNamespace;
  const type = settings.openlineageTransportType ?? (settings.openlineageUrl ? 'http' : undefined);
  if (type === 'file') {
    const path = settings.openlineageTransportLogFilePath;
    if (!path)
      throw new ConfigError(
        `${LINEAGE_ENV_NAMES.openlineageTransportType}=file needs ` +
          `${LINEAGE_ENV_NAMES.openlineageTransportLogFilePath}: the file the events are appended to, one JSON per line`,
      );
    return { kind: 'file', path, namespace };
  }
  if (type === 'http') {
    if (!settings.openlineageUrl)
      throw new ConfigError(
        `${LINEAGE_ENV_NAMES.openlineageTransportType}=http needs ${LINEAGE_ENV_NAMES.openlineageUrl}: the collector's address, e.g. http://localhost:5000`,
      );
    const base = settings.openlineageUrl.replace(/\/+$/, '');
    const endpoint = settings.openlineageEndpoint.replace(/^\/+/, '');
    return {
      kind: 'http',
      url: endpoint ? `${base}/${endpoint}` : base,
      ...(settings.openlineageApiKey ? { apiKey: settings.openlineageApiKey } : {}),
      timeoutMs: Math.round(settings.openlineageTransportTimeout * 1000),
      namespace,
    };
  }
  return { kind: 'none' };
}
