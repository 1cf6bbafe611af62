/**
 * A real rsyslogd as a syslog sender of the test bed (issue 16): one foreground daemon per sender,
 * with a generated config in its own directory, started under the bed's supervisor (it dies with
 * its owner) and fed by appending lines to a file it tails (imfile). It forwards with omfwd over
 * UDP, TCP (LF or RFC 6587 octet-counted) or TLS (gtls, anon or x509/name with a client
 * certificate) through a disk-assisted queue that retries for ever, as a production forwarder
 * would. No system socket is opened (no imuxsock/imklog: v8 loads only what the config names) and
 * rsyslog's own messages go to a file in its directory, never /dev/log.
 * Test certificates (CA, server, client) come from the openssl CLI: makeTestCerts().
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { requireTool, startProcess, stopProcess, tailLog, waitUntil, type ServiceProcess } from './process';

/** How one rsyslogd forwards. */
export interface RsyslogForward {
  port: number;
  protocol: 'udp' | 'tcp';
  /** TCP only: LF-terminated (`traditional`) or RFC 6587 octet counting. */
  framing?: 'traditional' | 'octet-counted';
  /** TLS over TCP (gtls): `anon` checks nothing, `x509/name` checks the server name. */
  tls?: { mode: 'anon' | 'x509/name'; certs: TestCerts; permittedPeer?: string };
  /** `raw` sends the file line as is; `rfc5424` wraps it (RSYSLOG_SyslogProtocol23Format). */
  template?: 'raw' | 'rfc5424';
}

/** The rsyslog.conf text for a sender tailing `inputFile` in `workDir` (pure). */
export function rsyslogConfig(workDir: string, inputFile: string, f: RsyslogForward): string {
  const tlsGlobal = f.tls
    ? `  defaultNetstreamDriverCAFile="${f.tls.certs.ca}"
  defaultNetstreamDriverCertFile="${f.tls.certs.clientCert}"
  defaultNetstreamDriverKeyFile="${f.tls.certs.clientKey}"\n`
    : '';
  const tlsAction = !f.tls
    ? ''
    : f.tls.mode === 'anon'
      ? ' StreamDriver="gtls" StreamDriverMode="1" StreamDriverAuthMode="anon"'
      : ` StreamDriver="gtls" StreamDriverMode="1" StreamDriverAuthMode="x509/name" StreamDriverPermittedPeers="${f.tls.permittedPeer ?? 'syslog-receiver'}"`;
  const framing = f.protocol === 'tcp' ? ` TCP_Framing="${f.framing ?? 'traditional'}"` : '';
  const template = f.template === 'rfc5424' ? 'RSYSLOG_SyslogProtocol23Format' : 'raw';
  return `global(workDirectory="${workDir}" processInternalMessages="on" maxMessageSize="64k"
${tlsGlobal})
module(load="imfile" mode="polling" pollingInterval="1")
input(type="imfile" file="${inputFile}" tag="fwtest" ruleset="fwd" readMode="0" freshStartTail="off")
template(name="raw" type="string" string="%msg%")
ruleset(name="fwd") {
  action(type="omfwd" target="127.0.0.1" port="${f.port}" protocol="${f.protocol}"${framing}${tlsAction}
         template="${template}"
         queue.type="LinkedList" queue.filename="fwdq" queue.saveOnShutdown="on"
         queue.size="100000" queue.maxDiskSpace="256m"
         action.resumeRetryCount="-1" action.resumeInterval="1" action.reportSuspension="on")
}
if $syslogfacility-text == 'syslog' then { action(type="omfile" file="${workDir}/rsyslogd-internal.log") stop }
`;
}

/** A running rsyslogd sender. */
export interface RsyslogSender {
  dir: string;
  inputFile: string;
  process: ServiceProcess;
  /** Appends lines (without LF) to the tailed file; rsyslog picks them up within its polling interval. */
  append(lines: readonly string[]): void;
  /** rsyslog's own log (suspension, TLS errors): for failure messages. */
  internalLog(): string;
  stop(): Promise<void>;
}

/**
 * Writes the config under `dir`, validates it (`rsyslogd -N1`) and starts `rsyslogd -n` under the
 * supervisor owned by `ownerPid` (default this process). Resolves once the daemon wrote its pid file.
 */
export async function startRsyslog(
  dir: string,
  forward: RsyslogForward,
  ownerPid = process.pid,
): Promise<RsyslogSender> {
  requireTool('rsyslogd', 'the syslog receiver tests send with rsyslog');
  fs.mkdirSync(dir, { recursive: true });
  const inputFile = path.join(dir, 'in.log');
  const confFile = path.join(dir, 'rsyslog.conf');
  const pidFile = path.join(dir, 'rsyslogd.pid');
  fs.writeFileSync(inputFile, '');
  fs.writeFileSync(confFile, rsyslogConfig(dir, inputFile, forward));
  execFileSync('rsyslogd', ['-N1', '-f', confFile], { stdio: 'pipe' });
  const proc = startProcess(
    {
      name: 'rsyslogd',
      command: 'rsyslogd',
      args: ['-n', '-f', confFile, '-i', pidFile],
      env: {},
      logFile: path.join(dir, 'rsyslogd.log'),
    },
    ownerPid,
  );
  await waitUntil('rsyslogd started', async () => fs.existsSync(pidFile), {
    timeoutMs: 20_000,
    logFile: proc.logFile,
    pid: proc.pid,
  });
  const internal = path.join(dir, 'rsyslogd-internal.log');
  return {
    dir,
    inputFile,
    process: proc,
    append: (lines) => fs.appendFileSync(inputFile, lines.map((l) => `${l}\n`).join('')),
    internalLog: () => (fs.existsSync(internal) ? tailLog(internal) : ''),
    stop: () => stopProcess(proc, 'SIGTERM', 10_000),
  };
}

/** Files of a throw-away PKI: a CA, a server cert for `syslog-receiver`/localhost/127.0.0.1, a client cert. */
export interface TestCerts {
  ca: string;
  serverCert: string;
  serverKey: string;
  clientCert: string;
  clientKey: string;
}

/** Creates TestCerts under `dir` with the openssl CLI (client CN `clientName`). */
export function makeTestCerts(dir: string, clientName = 'fw-01'): TestCerts {
  requireTool('openssl', 'test certificates');
  fs.mkdirSync(dir, { recursive: true });
  const f = (n: string) => path.join(dir, n);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe', cwd: dir });
  ssl(
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '2',
    '-subj',
    '/CN=test-ca',
    '-keyout',
    f('ca.key'),
    '-out',
    f('ca.crt'),
  );
  const issue = (name: string, cn: string, ext: string) => {
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${cn}`, '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`));
    fs.writeFileSync(f(`${name}.ext`), ext);
    ssl('x509', '-req', '-in', f(`${name}.csr`), '-CA', f('ca.crt'), '-CAkey', f('ca.key'), '-CAcreateserial', '-days', '2', '-extfile', f(`${name}.ext`), '-out', f(`${name}.crt`));
  }; // prettier-ignore
  issue(
    'server',
    'syslog-receiver',
    'subjectAltName=DNS:syslog-receiver,DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n',
  );
  issue('client', clientName, 'extendedKeyUsage=clientAuth\n');
  return {
    ca: f('ca.crt'),
    serverCert: f('server.crt'),
    serverKey: f('server.key'),
    clientCert: f('client.crt'),
    clientKey: f('client.key'),
  };
}
