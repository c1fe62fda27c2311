/**
 * Secrets never reach output: every known secret (client secret, tokens) is registered here
 * as soon as it is read or received, and every line written by the program passes through redact().
 *
 * A secret can come back in other forms than the one sent: JSON-escaped (a server echoing the request
 * body), URL-encoded (a redirect's Location, a query), base64 (a Basic header, a token's payload), and
 * cut (an error excerpt of 300 characters ending half-way through it). So each secret is registered with
 * all those forms, and any stretch of text that shares 8 characters or more in a row with one of them
 * is redacted, wherever it stands: a cut at an excerpt's edge is such a stretch too.
 */
const secrets = new Set<string>();

/** The shortest run of a secret's form that is redacted on its own (a shorter secret only whole). */
export const MIN_CUT = 8;

/** Every registered form, longest first, and every MIN_CUT-character run of any of them. */
const forms: string[] = [];
const grams = new Set<string>();

export function registerSecret(value: string | undefined): void {
  if (!value || value.length < 4 || secrets.has(value)) return;
  secrets.add(value);
  for (const text of new Set(formsOf(value))) {
    for (let i = 0; i + MIN_CUT <= text.length; i++) grams.add(text.slice(i, i + MIN_CUT));
    forms.push(text);
  }
  forms.sort((a, b) => b.length - a.length);
}

/** The forms `value` may be echoed back in. */
export function formsOf(value: string): string[] {
  const json = JSON.stringify(value).slice(1, -1);
  const asciiJson = json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const url = encodeURIComponent(value);
  const out = [
    value,
    json,
    asciiJson,
    json.replaceAll('/', '\\/'),
    JSON.stringify(json).slice(1, -1), // escaped twice: a JSON body quoted inside another
    url,
    url.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()),
    url.replaceAll('%20', '+'),
    encodeURI(value),
  ];
  // base64 and base64url of the secret, and of its JSON-escaped form (a whole JSON body encoded), at each
  // of the three alignments it may start at inside a longer value
  for (const plain of new Set([value, json])) {
    const bytes = Buffer.from(plain, 'utf8');
    for (let k = 0; k < 3; k++) {
      const encoded = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64');
      const core = k === 0 ? encoded : encoded.slice(Math.ceil((k * 4) / 3), Math.floor(((k + bytes.length) * 4) / 3));
      if (core.length >= MIN_CUT || k === 0)
        out.push(core, core.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, ''));
    }
  }
  return out.filter((f) => f.length >= 4);
}

/** AWS access key ids (long-term AKIA…, temporary ASIA…, and the other documented prefixes). */
const AWS_KEY_ID = /\b(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA|ABIA|ACCA)[A-Z0-9]{16}\b/g;
/** A secret key or session token named as such: `aws_secret_access_key = …`, `"SecretAccessKey":"…"`, `AWS_SESSION_TOKEN=…`. */
const AWS_SECRET_FIELD =
  /((?:aws_?secret_?access_?key|secret_?access_?key|aws_?session_?token|session_?token|x-amz-security-token)["']?\s*[:=]\s*["']?)[A-Za-z0-9/+=%._-]{8,}/gi;
/** The signing parts of a pre-signed URL (SigV4 and SigV2 query strings), whatever the case and encoding. */
const PRESIGNED =
  /((?:X-Amz-Signature|X-Amz-Credential|X-Amz-Security-Token|AWSAccessKeyId|Signature|x-amz-signature|x-amz-credential|x-amz-security-token)=)[^&\s"'<>]+/g;
/** An `Authorization: AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…` header. */
const SIGV4_HEADER = /((?:Credential|Signature)=)[^,\s"']+/g;

/** Replaces registered secrets (in any of their forms, whole or cut) and anything shaped like a bearer token or JWT. */
export function redact(text: string): string {
  let out = text;
  // whole forms first (a short secret is only ever redacted whole), longest first
  for (const f of forms) if (out.includes(f)) out = out.split(f).join('[redacted]');
  out = redactCuts(out);
  return out
    .replace(/(Bearer\s+)[A-Za-z0-9._~+/=-]+/g, '$1[redacted]')
    .replace(/eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, '[redacted-jwt]')
    .replace(/("?client_secret"?\s*[:=]\s*"?)[^",\s}]+/g, '$1[redacted]')
    .replace(AWS_KEY_ID, '[redacted-aws-key]')
    .replace(AWS_SECRET_FIELD, '$1[redacted]')
    .replace(PRESIGNED, '$1[redacted]')
    .replace(SIGV4_HEADER, '$1[redacted]');
}

/** Every stretch of `text` made of MIN_CUT-character runs of a secret's form, replaced. */
function redactCuts(text: string): string {
  if (grams.size === 0 || text.length < MIN_CUT) return text;
  const hidden = new Uint8Array(text.length);
  let any = false;
  for (let i = 0; i + MIN_CUT <= text.length; i++) {
    const gram = text.slice(i, i + MIN_CUT);
    if (grams.has(gram)) {
      hidden.fill(1, i, i + MIN_CUT);
      any = true;
    }
  }
  if (!any) return text;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    if (!hidden[i]) out += text[i];
    else if (i === 0 || !hidden[i - 1]) out += '[redacted]';
  }
  return out;
}
