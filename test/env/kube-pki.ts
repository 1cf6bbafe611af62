/**
 * The test bed's own PKI for TLS on loopback: a CA, the apiserver's serving
 * certificate, an admin (system:masters) and a non-admin client identity, the service-account key
 * pair, and kubeconfigs naming them. Separate from kubernetes.ts because it is one-off openssl
 * file generation, independent of how the processes are started and stopped.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { requireTool } from './process';

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Issues a key + certificate signed by the bed's CA. */
function issueCert(dir: string, name: string, subject: string, ext?: string): void {
  openssl(
    [
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      subject,
    ],
    dir,
  );
  const args = [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '3650',
    '-out',
    `${name}.crt`,
  ];
  if (ext) {
    fs.writeFileSync(path.join(dir, `${name}.ext`), ext);
    args.push('-extfile', `${name}.ext`);
  }
  openssl(args, dir);
}

/** CA, serving cert, admin and non-admin client identities, service-account key pair. */
export function generatePki(dir: string): void {
  requireTool('openssl', 'the test bed generates its own CA and certificates');
  fs.mkdirSync(dir, { recursive: true });
  openssl(
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.crt',
      '-days',
      '3650',
      '-subj',
      '/CN=logpipeline-testbed-ca',
    ],
    dir,
  );
  issueCert(
    dir,
    'apiserver',
    '/CN=kube-apiserver',
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n',
  );
  issueCert(dir, 'admin', '/O=system:masters/CN=testbed-admin', 'extendedKeyUsage=clientAuth\n');
  issueCert(dir, 'user', '/O=testbed-users/CN=testbed-user', 'extendedKeyUsage=clientAuth\n');
  openssl(['genrsa', '-out', 'sa.key', '2048'], dir);
  openssl(['rsa', '-in', 'sa.key', '-pubout', '-out', 'sa.pub'], dir);
}

/** Writes a kubeconfig for `user` (admin or user) against the bed's apiserver and CA. */
export function writeKubeconfig(file: string, server: string, pki: string, user: string): void {
  const yaml = `apiVersion: v1
kind: Config
clusters:
- name: testbed
  cluster:
    server: ${server}
    certificate-authority: ${path.join(pki, 'ca.crt')}
users:
- name: ${user}
  user:
    client-certificate: ${path.join(pki, `${user}.crt`)}
    client-key: ${path.join(pki, `${user}.key`)}
contexts:
- name: testbed
  context: { cluster: testbed, user: ${user}, namespace: default }
current-context: testbed
`;
  fs.writeFileSync(file, yaml);
}
