/**
 * The one place where an error becomes a status or Event message. Errors can carry whatever a
 * remote endpoint answered: a proxy's 32 KB HTML page, a stack trace, a URL with credentials.
 * Status and Events are read by everyone with `get` on the pipeline, so they get at most the
 * first line of the error, without markup or credentials, cut to 256 characters.
 */

/** Longest message built from an error. */
export const MAX_ERROR_MESSAGE = 256;

const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;
const HOST_CREDENTIALS = /(^|[\s,;(=])[^\s,;@/:()=]+:[^\s,;@/()]+@(?=[a-z0-9.[\]-]+:\d+)/gi;
const MARKUP = /<(?:!doctype|html|head|body|title|\?xml|[a-z][a-z0-9]*(?:\s[^>]*)?>)/i;
// Control characters except tab: a terminal escape from a foreign body has no place in status.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** Removes `user:password@` from URLs and from `user:password@host:port` broker addresses. */
export function redactCredentials(text: string): string {
  return text.replace(URL_CREDENTIALS, '$1***@').replace(HOST_CREDENTIALS, '$1***@');
}

/**
 * A short, safe message from an error (or any text): first non-empty line, a foreign markup body
 * replaced by a note, credentials in URLs redacted, control characters dropped, at most `max`
 * characters (default 256).
 */
export function sanitizeMessage(err: unknown, max = MAX_ERROR_MESSAGE): string {
  const raw = err instanceof Error ? err.message : typeof err === 'string' ? err : String(err);
  let text = raw;
  const markup = MARKUP.exec(text);
  if (markup) text = `${text.slice(0, markup.index).trimEnd()} [markup body omitted]`;
  const line = text.split(/\r?\n/).find((l) => l.trim() !== '') ?? '';
  const clean = redactCredentials(line.replace(CONTROL, '')).trim() || 'unknown error';
  const chars = [...clean];
  return chars.length <= max ? clean : `${chars.slice(0, max - 1).join('')}…`;
}
