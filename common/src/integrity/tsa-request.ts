/**
 * RFC 3161 Time-Stamp Protocol, client side: DER-encodes a TimeStampReq (SHA-256 message imprint,
 * random nonce, certReq so the token carries the TSA certificate), POSTs it as
 * application/timestamp-query, and parses the TimeStampResp: PKIStatus must be granted (0) or
 * grantedWithMods (1), and the token's TSTInfo must echo our imprint and nonce.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import {
  childrenOf,
  contentOf,
  DerError,
  derBoolean,
  derInteger,
  derNull,
  derOctetString,
  derOid,
  derSequence,
  encodingOf,
  expectTag,
  parseDer,
  readInteger,
  TAG,
} from './der';
import { OID } from './oids';
import { parseTimeStampToken, type TstInfo } from './timestamp-token';

/** A request ready to send, with the values the response must echo. */
export interface TimeStampRequest {
  der: Buffer;
  imprint: Buffer;
  nonce: bigint;
}

/** Builds a TimeStampReq for a SHA-256 digest (32 bytes) with a fresh 64-bit nonce. */
export function buildTimeStampRequest(
  sha256Digest: Buffer,
  nonce: bigint = BigInt('0x' + randomBytes(8).toString('hex')),
): TimeStampRequest {
  if (sha256Digest.length !== 32) throw new RangeError('message imprint must be a 32-byte SHA-256 digest');
  const messageImprint = derSequence(
    derSequence(derOid(OID.sha256), derNull()),
    derOctetString(sha256Digest),
  );
  const der = derSequence(derInteger(1), messageImprint, derInteger(nonce), derBoolean(true));
  return { der, imprint: sha256Digest, nonce };
}

/** PKIStatus values (RFC 3161 §2.4.2). */
const STATUS_TEXT = [
  'granted',
  'grantedWithMods',
  'rejection',
  'waiting',
  'revocationWarning',
  'revocationNotification',
];

/** A parsed, checked response: the token's DER (to store) and its TSTInfo. */
export interface TimeStampReply {
  token: Buffer;
  info: TstInfo;
}

/**
 * Parses a TimeStampResp and checks it answers `req`; throws DerError/Error with the TSA's
 * status text when the TSA refused or the token does not match the request.
 */
export function parseTimeStampResponse(body: Buffer, req: TimeStampRequest): TimeStampReply {
  const top = childrenOf(expectTag(parseDer(body), TAG.SEQUENCE, 'TimeStampResp'));
  const statusInfo = childrenOf(expectTag(top[0], TAG.SEQUENCE, 'PKIStatusInfo'));
  const status = Number(readInteger(statusInfo[0]));
  if (status !== 0 && status !== 1) {
    const text =
      statusInfo[1]?.tag === TAG.SEQUENCE
        ? childrenOf(statusInfo[1])
            .map((n) => contentOf(n).toString('utf8'))
            .join('; ')
        : '';
    throw new Error(
      `TSA refused the request: ${STATUS_TEXT[status] ?? `status ${status}`}${text ? ` (${text})` : ''}`,
    );
  }
  if (!top[1]) throw new DerError('granted TimeStampResp without a token');
  const token = Buffer.from(encodingOf(top[1]));
  const parsed = parseTimeStampToken(token);
  if (!parsed.info.imprint.equals(req.imprint) || parsed.info.imprintAlgorithm !== OID.sha256) {
    throw new Error('TSA token does not carry the requested message imprint');
  }
  if (parsed.info.nonce !== req.nonce) throw new Error('TSA token nonce does not match the request');
  return { token, info: parsed.info };
}

/**
 * How to authenticate to a TSA that is not open: HTTP basic auth and/or a TLS client certificate
 * (mTLS), plus the CA that issued the TSA's HTTPS certificate when it is not a public one. Values
 * come from Secrets; they are never logged nor put in an error message.
 */
export interface TsaClientAuth {
  username?: string;
  password?: string;
  /** PEM client certificate (chain) and its private key, for mTLS. */
  clientCertPem?: string;
  clientKeyPem?: string;
  /** PEM CA certificate(s) trusted for the TSA's HTTPS server certificate (default: Node's store). */
  caPem?: string;
}

/** POSTs the request to the TSA and returns the checked reply (timeout in ms). */
export async function requestTimeStamp(
  url: string,
  sha256Digest: Buffer,
  timeoutMs = 10_000,
  auth: TsaClientAuth = {},
): Promise<TimeStampReply> {
  const req = buildTimeStampRequest(sha256Digest);
  const body = await postDer(url, req.der, timeoutMs, auth);
  return parseTimeStampResponse(body, req);
}

/** Request options carrying the credentials (basic auth header, TLS client certificate, CA). */
function authOptions(target: URL, auth: TsaClientAuth): https.RequestOptions {
  if ((auth.clientCertPem || auth.caPem) && target.protocol !== 'https:')
    throw new Error('a TSA client certificate or CA needs an https:// TSA URL');
  if ((auth.clientCertPem === undefined) !== (auth.clientKeyPem === undefined))
    throw new Error('a TSA client certificate needs both the certificate and its key');
  const headers: Record<string, string> = {};
  if (auth.username !== undefined || auth.password !== undefined) {
    const pair = `${auth.username ?? ''}:${auth.password ?? ''}`;
    headers.authorization = `Basic ${Buffer.from(pair, 'utf8').toString('base64')}`;
  }
  const tls: https.RequestOptions = {};
  if (auth.clientCertPem) tls.cert = auth.clientCertPem;
  if (auth.clientKeyPem) tls.key = auth.clientKeyPem;
  if (auth.caPem) tls.ca = auth.caPem;
  return { ...tls, headers };
}

const MAX_RESPONSE_BYTES = 1 << 20;

function postDer(url: string, der: Buffer, timeoutMs: number, auth: TsaClientAuth): Promise<Buffer> {
  const target = new URL(url);
  const lib = target.protocol === 'https:' ? https : target.protocol === 'http:' ? http : null;
  if (!lib) return Promise.reject(new Error(`unsupported TSA URL scheme ${target.protocol}`));
  if (target.username || target.password)
    return Promise.reject(new Error('put TSA credentials in a Secret, not in the TSA URL'));
  let extra: https.RequestOptions;
  try {
    extra = authOptions(target, auth);
  } catch (err) {
    return Promise.reject(err as Error);
  }
  return new Promise((resolve, reject) => {
    const req = lib.request(
      target,
      {
        ...extra,
        method: 'POST',
        timeout: timeoutMs,
        headers: {
          ...extra.headers,
          'content-type': 'application/timestamp-query',
          'content-length': der.length,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) req.destroy(new Error('TSA response too large'));
          else chunks.push(c);
        });
        res.on('end', () => {
          const type = String(res.headers['content-type'] ?? '');
          if (res.statusCode === 401 || res.statusCode === 403)
            reject(new Error(`TSA refused the credentials (HTTP ${res.statusCode})`));
          else if (res.statusCode !== 200) reject(new Error(`TSA answered HTTP ${res.statusCode}`));
          else if (!type.startsWith('application/timestamp-reply'))
            reject(new Error(`TSA answered content-type ${type || '(none)'}`));
          else resolve(Buffer.concat(chunks));
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`TSA did not answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(der);
  });
}
