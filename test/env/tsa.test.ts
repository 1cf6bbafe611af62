/**
 * The RFC 3161 client and token verifier against real OpenSSL tokens from the loopback TSA
 * (test/env/tsa.ts): request/response round trip, then every verification step failing for the
 * right reason — wrong imprint, untrusted CA, tampered TSTInfo, tampered signature, missing ESS
 * certificate binding, a certificate without the timeStamping usage.
 */
import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  buildTimeStampRequest,
  parseTimeStampResponse,
  requestTimeStamp,
} from '../../common/src/integrity/tsa-request';
import { parseTimeStampToken, verifyTimeStampToken } from '../../common/src/integrity/timestamp-token';
import { OID } from '../../common/src/integrity/oids';
import { makeTsaCertificates, startTsa, type TsaServer } from './tsa';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

let tsa: TsaServer;
let other: TsaServer;
let trusted: X509Certificate[];

beforeAll(async () => {
  [tsa, other] = await Promise.all([startTsa(), startTsa({ keyType: 'ec', name: 'other' })]);
  trusted = [new X509Certificate(tsa.caCertPem)];
}, 60_000);

afterAll(async () => {
  await Promise.all([tsa?.close(), other?.close()]);
});

test('requests a token and verifies it: imprint, nonce, signature, ESS binding, chain to the trusted CA', async () => {
  const d = digest('checkpoint 1');
  const reply = await requestTimeStamp(tsa.url, d);
  expect(reply.info.imprint.equals(d)).toBe(true);
  expect(reply.info.imprintAlgorithm).toBe(OID.sha256);
  expect(reply.info.policy).toBe('1.3.6.1.4.1.99999.1');
  expect(Math.abs(reply.info.genTimeMs - Date.now())).toBeLessThan(60_000);
  expect(verifyTimeStampToken(reply.token, d, trusted)).toEqual({ problem: null, info: reply.info });
  // openssl agrees that the token we stored is valid for this digest and CA.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsa-verify-'));
  fs.writeFileSync(path.join(dir, 'token.der'), reply.token);
  const out = execFileSync('openssl', [
    'ts',
    '-verify',
    '-digest',
    d.toString('hex'),
    '-in',
    path.join(dir, 'token.der'),
    '-token_in',
    '-CAfile',
    tsa.caCertFile,
  ]);
  expect(out.toString()).toContain('Verification: OK');
  fs.rmSync(dir, { recursive: true });
});

test('an EC-keyed TSA verifies against its own CA but not against another CA', async () => {
  const d = digest('checkpoint 2');
  const reply = await requestTimeStamp(other.url, d);
  expect(verifyTimeStampToken(reply.token, d, [new X509Certificate(other.caCertPem)]).problem).toBeNull();
  expect(verifyTimeStampToken(reply.token, d, trusted).problem).toBe(
    'TSA certificate does not chain to a trusted CA',
  );
});

test('a token for another checkpoint does not verify', async () => {
  const reply = await requestTimeStamp(tsa.url, digest('checkpoint A'));
  expect(verifyTimeStampToken(reply.token, digest('checkpoint B'), trusted).problem).toBe(
    'message imprint does not match the checkpoint',
  );
});

test('tampering with the TSTInfo or the signature is detected', async () => {
  const d = digest('checkpoint 3');
  const { token } = await requestTimeStamp(tsa.url, d);
  const parsed = parseTimeStampToken(token);
  // Flip one byte of genTime inside the TSTInfo (its bytes appear verbatim in the token).
  const at = token.indexOf(parsed.eContent);
  const timeAt = parsed.eContent.indexOf(Buffer.from([0x18])) + 3;
  const changed = Buffer.from(token);
  changed[at + timeAt] ^= 0x01;
  expect(verifyTimeStampToken(changed, d, trusted).problem).toBe(
    'messageDigest attribute does not match the TSTInfo',
  );
  const sigAt = token.indexOf(parsed.signer.signature);
  const badSig = Buffer.from(token);
  badSig[sigAt + 10] ^= 0xff;
  expect(verifyTimeStampToken(badSig, d, trusted).problem).toBe(
    'signature over the signed attributes is invalid',
  );
  expect(verifyTimeStampToken(Buffer.from('not a token'), d, trusted).problem).toMatch(/^malformed token/);
});

test('parseTimeStampResponse rejects a reply to a different request (nonce)', async () => {
  const d = digest('checkpoint 4');
  const req = buildTimeStampRequest(d, 1234n);
  const res = await fetch(tsa.url, {
    method: 'POST',
    headers: { 'content-type': 'application/timestamp-query' },
    body: req.der,
  });
  const body = Buffer.from(await res.arrayBuffer());
  expect(parseTimeStampResponse(body, req).info.nonce).toBe(1234n);
  expect(() => parseTimeStampResponse(body, { ...req, nonce: 99n })).toThrow(/nonce/);
  expect(() => parseTimeStampResponse(body, buildTimeStampRequest(digest('x'), 1234n))).toThrow(/imprint/);
});

test('a token signed by a certificate without the timeStamping usage is refused', async () => {
  // OpenSSL's TSA refuses such a signer, so build the token with `openssl cms -sign -cades`
  // (SignedData over a real TSTInfo, with the ESS signingCertificateV2 attribute).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tsa-noeku-'));
  await makeTsaCertificates(dir, { keyType: 'ec' });
  fs.writeFileSync(
    path.join(dir, 'plain-ext.cnf'),
    'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\n',
  );
  const sh = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  sh([
    'x509',
    '-req',
    '-in',
    'tsa.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-out',
    'plain.crt',
    '-days',
    '30',
    '-extfile',
    'plain-ext.cnf',
  ]);
  const d = digest('checkpoint 5');
  const { token } = await requestTimeStamp(tsa.url, d);
  fs.writeFileSync(path.join(dir, 'tstinfo.der'), parseTimeStampToken(token).eContent);
  sh([
    'cms',
    '-sign',
    '-cades',
    '-binary',
    '-nodetach',
    '-in',
    'tstinfo.der',
    '-econtent_type',
    OID.tstInfo,
    '-signer',
    'plain.crt',
    '-inkey',
    'tsa.key',
    '-md',
    'sha256',
    '-outform',
    'DER',
    '-out',
    'forged.der',
  ]);
  const forged = fs.readFileSync(path.join(dir, 'forged.der'));
  const ca = [new X509Certificate(fs.readFileSync(path.join(dir, 'ca.crt')))];
  expect(verifyTimeStampToken(forged, d, ca).problem).toBe(
    'signer certificate lacks the timeStamping extended key usage',
  );
  // The same construction with the proper TSA certificate passes, so only the usage made the difference.
  sh([
    'cms',
    '-sign',
    '-cades',
    '-binary',
    '-nodetach',
    '-in',
    'tstinfo.der',
    '-econtent_type',
    OID.tstInfo,
    '-signer',
    'tsa.crt',
    '-inkey',
    'tsa.key',
    '-md',
    'sha256',
    '-outform',
    'DER',
    '-out',
    'proper.der',
  ]);
  expect(verifyTimeStampToken(fs.readFileSync(path.join(dir, 'proper.der')), d, ca).problem).toBeNull();
  fs.rmSync(dir, { recursive: true });
});

describe('TSAs that are not open', () => {
  let basic: TsaServer;
  let mtls: TsaServer;
  const creds = { username: 'auditor', password: 's3cret-Pa55' };

  beforeAll(async () => {
    [basic, mtls] = await Promise.all([
      startTsa({ name: 'basic', basicAuth: creds }),
      startTsa({ name: 'mtls', mtls: true, basicAuth: creds }),
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([basic?.close(), mtls?.close()]);
  });

  test('HTTP basic auth: granted with the credentials, refused (without echoing them) otherwise', async () => {
    const d = digest('basic');
    const reply = await requestTimeStamp(basic.url, d, 10_000, creds);
    expect(verifyTimeStampToken(reply.token, d, [new X509Certificate(basic.caCertPem)]).problem).toBeNull();
    const refusedBefore = basic.refused();
    const wrong = requestTimeStamp(basic.url, d, 10_000, { username: 'auditor', password: 'wrong-Pa55' });
    await expect(wrong).rejects.toThrow('TSA refused the credentials (HTTP 401)');
    await expect(requestTimeStamp(basic.url, d)).rejects.toThrow('HTTP 401');
    expect(basic.refused()).toBe(refusedBefore + 2);
    const err = await wrong.catch((e: Error) => e.message);
    expect(err).not.toContain('wrong-Pa55');
  });

  test('credentials in the URL are refused: they belong in a Secret', async () => {
    const url = basic.url.replace('http://', 'http://auditor:s3cret-Pa55@');
    await expect(requestTimeStamp(url, digest('x'))).rejects.toThrow('not in the TSA URL');
  });

  test('mTLS: granted with the client certificate, refused without it', async () => {
    const d = digest('mtls');
    const tls = { caPem: mtls.caCertPem, clientCertPem: mtls.clientCertPem, clientKeyPem: mtls.clientKeyPem };
    const reply = await requestTimeStamp(mtls.url, d, 10_000, { ...creds, ...tls });
    expect(verifyTimeStampToken(reply.token, d, [new X509Certificate(mtls.caCertPem)]).problem).toBeNull();
    await expect(requestTimeStamp(mtls.url, d, 10_000, { ...creds, caPem: mtls.caCertPem })).rejects.toThrow(
      'HTTP 401',
    );
    // The TSA's HTTPS certificate is checked: without its CA the connection is refused.
    await expect(
      requestTimeStamp(mtls.url, d, 10_000, { ...creds, ...tls, caPem: undefined }),
    ).rejects.toThrow(/certificate/);
  });

  test('a client certificate over plain HTTP or without its key is a configuration error', async () => {
    const d = digest('cfg');
    await expect(
      requestTimeStamp(basic.url, d, 10_000, { clientCertPem: 'x', clientKeyPem: 'y' }),
    ).rejects.toThrow('needs an https:// TSA URL');
    await expect(requestTimeStamp(mtls.url, d, 10_000, { clientCertPem: 'x' })).rejects.toThrow(
      'both the certificate and its key',
    );
  });
});
