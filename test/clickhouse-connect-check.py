"""A second official ClickHouse client against the test bed: clickhouse-connect (Python) inserts
10,000 rows in Native (its own insert format) and in RowBinary (raw_insert), under each request
compression it offers (none, gzip, lz4, zstd), and reads every row back, in Native (query) and in
RowBinary (raw_query). Used by test/clickhouse-connect.test.ts.

Run: <venv>/bin/python clickhouse-connect-check.py URL USER DATABASE  (password in CH_PASSWORD)
Prints one JSON object per case: {"case", "ok", "written_rows", "detail"}; exits 1 on any failure.
"""
import datetime
import gzip
import io
import ipaddress
import json
import os
import struct
import sys
from urllib.parse import urlparse

import clickhouse_connect
import lz4.frame

try:
    from compression import zstd  # Python >= 3.14
except ImportError:
    from backports import zstd  # what clickhouse-connect itself uses before 3.14

COMPRESSORS = {'gzip': gzip.compress, 'lz4': lz4.frame.compress, 'zstd': zstd.compress}

ROWS = 10_000
COLUMNS = ['a', 's', 't', 'ip', 'n']
BASE_TS = 1_767_225_600  # 2026-01-01T00:00:00Z


def expected_rows():
    """Row i: UInt32 i (row 2570 is the bytes 0A 0A), a String full of empty lines and a tab,
    a DateTime, an IPv6 derived from i, a Nullable(Int64) that is NULL for two rows in three."""
    return [
        (i, 'x\n\n\t' * (i % 7), BASE_TS + i, str(ipaddress.IPv6Address(f'2001:db8::{i:x}')), None if i % 3 else -i * 1_000_000_007)
        for i in range(ROWS)
    ]


def leb128(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def rowbinary(rows):
    buf = io.BytesIO()
    for a, s, t, ip, n in rows:
        sb = s.encode()
        buf.write(struct.pack('<I', a) + leb128(len(sb)) + sb + struct.pack('<I', t))
        buf.write(ipaddress.IPv6Address(ip).packed)
        buf.write(b'\x01' if n is None else b'\x00' + struct.pack('<q', n))
    return buf.getvalue()


def read_leb128(b, pos):
    n = shift = 0
    while True:
        byte = b[pos]
        pos += 1
        n |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return n, pos


def parse_rowbinary(b):
    rows, pos = [], 0
    while pos < len(b):
        (a,) = struct.unpack_from('<I', b, pos)
        ln, pos = read_leb128(b, pos + 4)
        s = b[pos:pos + ln].decode()
        pos += ln
        (t,) = struct.unpack_from('<I', b, pos)
        ip = str(ipaddress.IPv6Address(bytes(b[pos + 4:pos + 20])))
        pos += 20
        if b[pos] == 1:
            n, pos = None, pos + 1
        else:
            (n,) = struct.unpack_from('<q', b, pos + 1)
            pos += 9
        rows.append((a, s, t, ip, n))
    return rows


def first_difference(got, want):
    if len(got) != len(want):
        return f'{len(got)} rows, expected {len(want)}'
    for g, w in zip(got, want):
        if tuple(g) != tuple(w):
            return f'row {w[0]}: got {tuple(g)!r}, expected {tuple(w)!r}'
    return None


def run_case(client, table, fmt, compression, want):
    client.command(f'DROP TABLE IF EXISTS {table}')
    client.command(
        f'CREATE TABLE {table} (a UInt32, s String, t DateTime(\'UTC\'), ip IPv6, n Nullable(Int64)) '
        'ENGINE = MergeTree ORDER BY a'
    )
    if fmt == 'Native':
        # The client compresses its own Native inserts with the client's `compress` setting.
        rows = [[a, s, datetime.datetime.fromtimestamp(t, tz=datetime.timezone.utc), ip, n] for a, s, t, ip, n in want]
        summary = client.insert(table, rows, column_names=COLUMNS)
    else:
        # raw_insert sends the block as given and names its Content-Encoding.
        block = COMPRESSORS[compression](rowbinary(want)) if compression else rowbinary(want)
        summary = client.raw_insert(table, COLUMNS, block, fmt='RowBinary', compression=compression or None)
    native = client.query(
        f'SELECT a, s, toUnixTimestamp(t), toString(ip), n FROM {table} ORDER BY a'
    ).result_rows
    raw = client.raw_query(f'SELECT a, s, t, ip, n FROM {table} ORDER BY a', fmt='RowBinary')
    problem = first_difference(native, want) or first_difference(parse_rowbinary(raw), want)
    client.command(f'DROP TABLE IF EXISTS {table}')
    return summary.written_rows, problem


def main():
    url, user, database = sys.argv[1], sys.argv[2], sys.argv[3]
    u = urlparse(url)
    password = os.environ.get('CH_PASSWORD', '')
    want = expected_rows()
    admin = clickhouse_connect.get_client(host=u.hostname, port=u.port, username=user, password=password)
    admin.command(f'CREATE DATABASE IF NOT EXISTS {database}')
    admin.close()
    failed = False
    for compression in [False, 'gzip', 'lz4', 'zstd']:
        client = clickhouse_connect.get_client(
            host=u.hostname, port=u.port, username=user, password=password, database=database, compress=compression
        )
        for fmt in ['Native', 'RowBinary']:
            name = f"{fmt}/{compression or 'none'}"
            try:
                written, problem = run_case(
                    client, f"cc_{fmt.lower()}_{compression or 'none'}", fmt, compression, want
                )
            except Exception as e:  # noqa: BLE001 - every failure is reported as the case's result
                written, problem = -1, f'{type(e).__name__}: {str(e)[:500]}'
            ok = problem is None and written == ROWS
            failed |= not ok
            print(json.dumps({'case': name, 'ok': ok, 'written_rows': written, 'detail': problem}), flush=True)
        client.close()
    admin = clickhouse_connect.get_client(host=u.hostname, port=u.port, username=user, password=password)
    admin.command(f'DROP DATABASE IF EXISTS {database}')
    admin.close()
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
