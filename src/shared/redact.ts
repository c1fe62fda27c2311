/**
 * Secrets never reach output: every known secret (client secret, tokens) is registered here
 * as soon as it is read or received, and every line written by the program passes through redact().
 */
const secrets = new Set<string>();

export function registerSecret(value: string | undefined): void {
  if (value && value.length >= 4) secrets.add(value);
}

/** Replaces registered secrets and anything shaped like a bearer token or JWT. */
export function redact(text: string): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join('[redacted]');
  return out
    .replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]+/g, '$1[redacted]')
    .replace(/eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, '[redacted-jwt]')
    .replace(/("?client_secret"?\s*[:=]\s*"?)[^",\s}]+/g, '$1[redacted]');
}
