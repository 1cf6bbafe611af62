/**
 * Verifies a CMS signer's signature with node:crypto for the algorithms TSAs use: RSA PKCS#1 v1.5
 * (rsaEncryption or shaNWithRSAEncryption), ECDSA with SHA-2, and Ed25519.
 */
import { constants, verify, type X509Certificate } from 'node:crypto';
import { OID } from './oids';

const RSA_WITH: Record<string, string> = {
  [OID.sha256WithRSA]: 'sha256',
  [OID.sha384WithRSA]: 'sha384',
  [OID.sha512WithRSA]: 'sha512',
};
const ECDSA_WITH: Record<string, string> = {
  [OID.ecdsaWithSha256]: 'sha256',
  [OID.ecdsaWithSha384]: 'sha384',
  [OID.ecdsaWithSha512]: 'sha512',
};

/**
 * Checks `signature` over `data` with the certificate's key; `digest` is the SignerInfo's digest
 * algorithm (used with plain rsaEncryption). Returns null when valid, else the problem.
 */
export function verifySignerSignature(
  algorithm: string,
  digest: string,
  data: Buffer,
  cert: X509Certificate,
  signature: Buffer,
): string | null {
  const key = cert.publicKey;
  let ok: boolean;
  try {
    if (algorithm === OID.rsaEncryption || RSA_WITH[algorithm]) {
      if (key.asymmetricKeyType !== 'rsa') return 'signature algorithm does not match the certificate key';
      ok = verify(
        RSA_WITH[algorithm] ?? digest,
        data,
        { key, padding: constants.RSA_PKCS1_PADDING },
        signature,
      );
    } else if (ECDSA_WITH[algorithm]) {
      if (key.asymmetricKeyType !== 'ec') return 'signature algorithm does not match the certificate key';
      ok = verify(ECDSA_WITH[algorithm], data, key, signature);
    } else if (algorithm === OID.ed25519) {
      ok = verify(null, data, key, signature);
    } else {
      return `unsupported signature algorithm ${algorithm}`;
    }
  } catch (err) {
    return `signature check failed: ${(err as Error).message}`;
  }
  return ok ? null : 'signature over the signed attributes is invalid';
}
