import { tlsRefusalReason } from './receiver';

describe('tlsRefusalReason', () => {
  it("reads the certificate verdict from the socket (Node's own error only says the socket hung up)", () => {
    const hangUp = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    expect(tlsRefusalReason(hangUp, { authorizationError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' })).toBe(
      'client certificate not trusted: UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    );
  });

  it('says when no certificate was presented, else the error code and first line', () => {
    const none = Object.assign(new Error('...peer did not return a certificate'), {
      code: 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE',
    });
    expect(tlsRefusalReason(none, {})).toBe('no client certificate presented');
    const proto = Object.assign(new Error('wrong version number\nmore'), {
      code: 'ERR_SSL_WRONG_VERSION_NUMBER',
    });
    expect(tlsRefusalReason(proto)).toBe('ERR_SSL_WRONG_VERSION_NUMBER: wrong version number');
  });
});
