/**
 * The kernel's view of a UDP socket from /proc/net/udp and /proc/net/udp6: the receive queue and
 * the drop counter (datagrams the kernel discarded because the socket's receive buffer was full,
 * before the receiver ever saw them). Matched by local port; sockets sharing a port (SO_REUSEPORT)
 * are summed. Off Linux (or without /proc) the read yields undefined.
 *
 * Line format (header: `sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid
 * timeout inode ref pointer drops`), addresses as hex `ADDR:PORT`.
 */
import fs from 'node:fs';

export interface UdpSocketStats {
  /** Bytes waiting in the socket's receive queue. */
  rxQueueBytes: number;
  /** Datagrams dropped by the kernel since the socket was created. */
  drops: number;
  sockets: number;
}

/** Parses the text of /proc/net/udp{,6} for sockets bound to `port`. */
export function parseProcNetUdp(text: string, port: number): UdpSocketStats {
  const want = port.toString(16).toUpperCase().padStart(4, '0');
  const out: UdpSocketStats = { rxQueueBytes: 0, drops: 0, sockets: 0 };
  const lines = text.split('\n');
  for (let i = 1; i < lines.length; i++) {
    const f = lines[i].trim().split(/\s+/);
    if (f.length < 13) continue;
    const local = f[1];
    if (local.slice(local.lastIndexOf(':') + 1) !== want) continue;
    if (f[3] !== '07') continue; // TCP_CLOSE is the state of an unconnected UDP socket
    const rx = f[4].split(':')[1];
    out.rxQueueBytes += parseInt(rx, 16) || 0;
    out.drops += Number(f[12]) || 0;
    out.sockets++;
  }
  return out;
}

/** Reads both tables; undefined when /proc/net is not there. */
export function readUdpSocketStats(port: number, root = '/proc/net'): UdpSocketStats | undefined {
  let text = '';
  let found = false;
  for (const f of ['udp', 'udp6']) {
    try {
      text +=
        (found
          ? fs.readFileSync(`${root}/${f}`, 'utf8').replace(/^[^\n]*\n/, '')
          : fs.readFileSync(`${root}/${f}`, 'utf8')) + '\n';
      found = true;
    } catch {
      /* absent (no IPv6, not Linux) */
    }
  }
  return found ? parseProcNetUdp(text, port) : undefined;
}
