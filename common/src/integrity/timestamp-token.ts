/**
 * RFC 3161 timestamp tokens: parsing the CMS SignedData (RFC 5652) that wraps a TSTInfo, and
 * verifying it: the TSTInfo's message imprint, the signed attributes (content type, messageDigest
 * = hash of the TSTInfo, ESS signing certificate naming the signer's certificate), the signer's
 * signature over the DER of the signed attributes, the certificate's timeStamping usage and
 * validity at genTime, and a chain from the signer up to a configured trusted CA.
 */
import { createHash, X509Certificate } from 'node:crypto';
import {
  childrenOf,
  contentOf,
  contextTag,
  DerError,
  encodingOf,
  expectTag,
  parseDer,
  readGeneralizedTime,
  readInteger,
  readOid,
  TAG,
  type DerNode,
} from './der';
import { hashName, OID } from './oids';
import { verifySignerSignature } from './signature';

/** The fields of a TSTInfo that matter here. */
export interface TstInfo {
  policy: string;
  imprintAlgorithm: string;
  imprint: Buffer;
  serial: bigint;
  genTimeMs: number;
  nonce: bigint | undefined;
}

/** A parsed token: TSTInfo, its DER (the signed content), the embedded certificates, the signer. */
export interface ParsedToken {
  info: TstInfo;
  eContent: Buffer;
  certificates: Buffer[];
  signer: {
    /** Issuer Name DER and serial, or a subject key identifier. */
    sid: { issuer: Buffer; serial: bigint } | { keyId: Buffer };
    digestAlgorithm: string;
    signedAttrs: DerNode | undefined;
    signatureAlgorithm: string;
    signature: Buffer;
  };
}

function parseTstInfo(der: Buffer): TstInfo {
  const f = childrenOf(expectTag(parseDer(der), TAG.SEQUENCE, 'TSTInfo'));
  const imprint = childrenOf(expectTag(f[2], TAG.SEQUENCE, 'MessageImprint'));
  const info: TstInfo = {
    policy: readOid(f[1]),
    imprintAlgorithm: readOid(childrenOf(expectTag(imprint[0], TAG.SEQUENCE, 'AlgorithmIdentifier'))[0]),
    imprint: Buffer.from(contentOf(expectTag(imprint[1], TAG.OCTET_STRING, 'hashedMessage'))),
    serial: readInteger(f[3]),
    genTimeMs: readGeneralizedTime(f[4]),
    nonce: undefined,
  };
  for (const extra of f.slice(5)) if (extra.tag === TAG.INTEGER) info.nonce = readInteger(extra);
  return info;
}

function parseSignerInfo(node: DerNode): ParsedToken['signer'] {
  const f = childrenOf(expectTag(node, TAG.SEQUENCE, 'SignerInfo'));
  let sid: ParsedToken['signer']['sid'];
  if (f[1].tag === TAG.SEQUENCE) {
    const ias = childrenOf(f[1]);
    sid = {
      issuer: Buffer.from(encodingOf(expectTag(ias[0], TAG.SEQUENCE, 'issuer'))),
      serial: readInteger(ias[1]),
    };
  } else {
    sid = { keyId: Buffer.from(contentOf(expectTag(f[1], contextTag(0, true), 'subjectKeyIdentifier'))) };
  }
  let i = 3;
  const signedAttrs = f[i]?.tag === contextTag(0) ? f[i++] : undefined;
  return {
    sid,
    digestAlgorithm: readOid(childrenOf(expectTag(f[2], TAG.SEQUENCE, 'digestAlgorithm'))[0]),
    signedAttrs,
    signatureAlgorithm: readOid(childrenOf(expectTag(f[i], TAG.SEQUENCE, 'signatureAlgorithm'))[0]),
    signature: Buffer.from(contentOf(expectTag(f[i + 1], TAG.OCTET_STRING, 'signature'))),
  };
}

/** Parses a TimeStampToken (ContentInfo with SignedData over a TSTInfo); throws DerError when malformed. */
export function parseTimeStampToken(token: Buffer): ParsedToken {
  const ci = childrenOf(expectTag(parseDer(token), TAG.SEQUENCE, 'ContentInfo'));
  if (readOid(ci[0]) !== OID.signedData) throw new DerError('token is not CMS SignedData');
  const sd = childrenOf(
    expectTag(childrenOf(expectTag(ci[1], contextTag(0), 'content'))[0], TAG.SEQUENCE, 'SignedData'),
  );
  const encap = childrenOf(expectTag(sd[2], TAG.SEQUENCE, 'EncapsulatedContentInfo'));
  if (readOid(encap[0]) !== OID.tstInfo) throw new DerError('SignedData does not carry a TSTInfo');
  const wrapped = childrenOf(expectTag(encap[1], contextTag(0), 'eContent'))[0];
  const eContent = Buffer.from(contentOf(expectTag(wrapped, TAG.OCTET_STRING, 'eContent')));
  let i = 3;
  const certificates: Buffer[] = [];
  if (sd[i]?.tag === contextTag(0)) {
    for (const c of childrenOf(sd[i++]))
      if (c.tag === TAG.SEQUENCE) certificates.push(Buffer.from(encodingOf(c)));
  }
  if (sd[i]?.tag === contextTag(1)) i++;
  const signerInfos = childrenOf(expectTag(sd[i], TAG.SET, 'signerInfos'));
  if (signerInfos.length !== 1)
    throw new DerError(`a timestamp token has exactly one signer, found ${signerInfos.length}`);
  return { info: parseTstInfo(eContent), eContent, certificates, signer: parseSignerInfo(signerInfos[0]) };
}

/** Attribute type OID -> first value node, from the signed attributes. */
function attributes(signedAttrs: DerNode): Map<string, DerNode> {
  const out = new Map<string, DerNode>();
  for (const attr of childrenOf(signedAttrs)) {
    const [type, values] = childrenOf(expectTag(attr, TAG.SEQUENCE, 'Attribute'));
    const first = childrenOf(expectTag(values, TAG.SET, 'attrValues'))[0];
    if (first) out.set(readOid(type), first);
  }
  return out;
}

/** Issuer Name DER, serial and subject key identifier of a certificate (for matching the signer id). */
function certIdentity(der: Buffer): { issuer: Buffer; serial: bigint; keyId?: Buffer } {
  const tbs = childrenOf(childrenOf(parseDer(der))[0]);
  let i = tbs[0].tag === contextTag(0) ? 1 : 0;
  const serial = readInteger(tbs[i]);
  const issuer = Buffer.from(encodingOf(tbs[i + 2]));
  let keyId: Buffer | undefined;
  for (i += 3; i < tbs.length; i++) {
    if (tbs[i].tag !== contextTag(3)) continue;
    for (const ext of childrenOf(childrenOf(tbs[i])[0])) {
      const parts = childrenOf(ext);
      if (readOid(parts[0]) === '2.5.29.14')
        keyId = Buffer.from(contentOf(parseDer(Buffer.from(contentOf(parts[parts.length - 1])))));
    }
  }
  return { issuer, serial, keyId };
}

function findSigner(token: ParsedToken): Buffer | undefined {
  const sid = token.signer.sid;
  return token.certificates.find((der) => {
    const id = certIdentity(der);
    return 'keyId' in sid
      ? id.keyId?.equals(sid.keyId) === true
      : id.serial === sid.serial && id.issuer.equals(sid.issuer);
  });
}

/** The ESS signing-certificate attribute (v2 or v1) must name the signer certificate by hash. */
function checkEssCertId(attrs: Map<string, DerNode>, signerDer: Buffer): string | null {
  const v2 = attrs.get(OID.signingCertificateV2);
  const v1 = attrs.get(OID.signingCertificate);
  const value = v2 ?? v1;
  if (!value) return 'no ESS signing-certificate attribute';
  const firstId = childrenOf(childrenOf(expectTag(value, TAG.SEQUENCE, 'SigningCertificate'))[0])[0];
  const f = childrenOf(expectTag(firstId, TAG.SEQUENCE, 'ESSCertID'));
  let alg = v2 ? 'sha256' : 'sha1';
  let k = 0;
  if (v2 && f[0].tag === TAG.SEQUENCE) alg = hashName(readOid(childrenOf(f[k++])[0])) ?? '';
  if (!alg) return 'unsupported ESS certificate hash algorithm';
  const expected = contentOf(expectTag(f[k], TAG.OCTET_STRING, 'certHash'));
  return createHash(alg).update(signerDer).digest().equals(expected)
    ? null
    : 'ESS signing certificate does not match the signer';
}

/** Verifies the chain from `leaf` to one of `trusted` using `pool` intermediates, at time `atMs`. */
function chainsToTrusted(
  leaf: X509Certificate,
  pool: X509Certificate[],
  trusted: X509Certificate[],
  atMs: number,
): string | null {
  let cur = leaf;
  for (let depth = 0; depth < 6; depth++) {
    if (trusted.some((t) => t.fingerprint256 === cur.fingerprint256)) return null;
    const anchor = trusted.find((t) => cur.checkIssued(t) && cur.verify(t.publicKey));
    if (anchor) return validAt(anchor, atMs) ? null : 'trusted CA certificate not valid at genTime';
    const next = pool.find(
      (c) => c.ca && c.fingerprint256 !== cur.fingerprint256 && cur.checkIssued(c) && cur.verify(c.publicKey),
    );
    if (!next) return 'TSA certificate does not chain to a trusted CA';
    if (!validAt(next, atMs)) return 'intermediate certificate not valid at genTime';
    cur = next;
  }
  return 'certificate chain too long';
}

function validAt(cert: X509Certificate, ms: number): boolean {
  return Date.parse(cert.validFrom) <= ms && ms <= Date.parse(cert.validTo);
}

/** Outcome of verifying a token: null problem means valid. */
export interface TokenVerification {
  problem: string | null;
  info?: TstInfo;
}

/**
 * Verifies a timestamp token for `expectedImprint` (SHA-256) against trusted CA certificates.
 * Every failure, including malformed DER, is reported as a problem string, never thrown.
 */
export function verifyTimeStampToken(
  token: Buffer,
  expectedImprint: Buffer,
  trusted: X509Certificate[],
): TokenVerification {
  try {
    const t = parseTimeStampToken(token);
    const problem = checkToken(t, expectedImprint, trusted);
    return { problem, info: t.info };
  } catch (err) {
    return { problem: `malformed token: ${(err as Error).message}` };
  }
}

function checkToken(t: ParsedToken, expectedImprint: Buffer, trusted: X509Certificate[]): string | null {
  if (t.info.imprintAlgorithm !== OID.sha256 || !t.info.imprint.equals(expectedImprint))
    return 'message imprint does not match the checkpoint';
  if (!t.signer.signedAttrs) return 'no signed attributes';
  const attrs = attributes(t.signer.signedAttrs);
  const ct = attrs.get(OID.contentType);
  if (!ct || readOid(ct) !== OID.tstInfo) return 'content-type attribute is not TSTInfo';
  const hash = hashName(t.signer.digestAlgorithm);
  if (!hash) return `unsupported digest algorithm ${t.signer.digestAlgorithm}`;
  const md = attrs.get(OID.messageDigest);
  if (
    !md ||
    !contentOf(expectTag(md, TAG.OCTET_STRING, 'messageDigest')).equals(
      createHash(hash).update(t.eContent).digest(),
    )
  ) {
    return 'messageDigest attribute does not match the TSTInfo';
  }
  const signerDer = findSigner(t);
  if (!signerDer) return 'signer certificate not included in the token';
  const essProblem = checkEssCertId(attrs, signerDer);
  if (essProblem) return essProblem;
  const cert = new X509Certificate(signerDer);
  // CMS signs the DER of the attributes as a SET OF (tag 0x31), not as the [0] IMPLICIT they are stored as.
  const signed = Buffer.from(encodingOf(t.signer.signedAttrs));
  signed[0] = TAG.SET;
  const sigProblem = verifySignerSignature(
    t.signer.signatureAlgorithm,
    hash,
    signed,
    cert,
    t.signer.signature,
  );
  if (sigProblem) return sigProblem;
  if (!(cert.keyUsage ?? []).includes(OID.timeStamping))
    return 'signer certificate lacks the timeStamping extended key usage';
  if (!validAt(cert, t.info.genTimeMs)) return 'signer certificate not valid at genTime';
  const pool = t.certificates.map((d) => new X509Certificate(d));
  return chainsToTrusted(cert, pool, trusted, t.info.genTimeMs);
}
