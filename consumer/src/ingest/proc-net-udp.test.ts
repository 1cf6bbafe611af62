import { parseProcNetUdp } from './proc-net-udp';

const TEXT = `   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode ref pointer drops
  512: 00000000:0202 00000000:0000 07 00000000:00000A00 00:00000000 00000000     0        0 12345 2 0000000000000000 17
  513: 0100007F:0202 00000000:0000 07 00000000:00000000 00:00000000 00000000     0        0 12346 2 0000000000000000 3
  514: 00000000:0203 00000000:0000 07 00000000:00000100 00:00000000 00000000     0        0 12347 2 0000000000000000 99
`;

describe('parseProcNetUdp', () => {
  it('sums drops and rx queue of the sockets bound to the port', () => {
    expect(parseProcNetUdp(TEXT, 514)).toEqual({ rxQueueBytes: 0xa00, drops: 20, sockets: 2 });
    expect(parseProcNetUdp(TEXT, 515)).toEqual({ rxQueueBytes: 0x100, drops: 99, sockets: 1 });
    expect(parseProcNetUdp(TEXT, 9)).toEqual({ rxQueueBytes: 0, drops: 0, sockets: 0 });
  });
});
