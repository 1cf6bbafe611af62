#!/usr/bin/env bash
# Installs everything the tests, benchmarks and the demo need, idempotently: system tools (apt,
# only when missing), npm dependencies, etcd + kube-apiserver + helm (Go builds) and Kafka jars (Maven),
# cached under ${LOGPIPELINE_CACHE:-~/.cache/logpipeline} so warm runs take seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v openssl >/dev/null || need_apt+=(openssl)
command -v go >/dev/null || need_apt+=(golang-go)
command -v mvn >/dev/null || need_apt+=(maven)
command -v java >/dev/null || need_apt+=(openjdk-17-jdk-headless)
# A librdkafka producer (what rsyslog omkafka, Fluent Bit and most relays use): the codec tests.
command -v kcat >/dev/null || need_apt+=(kcat)
# Real syslog senders for the receiver's tests (issue 16): rsyslog omfwd over UDP/TCP/TLS (gtls and
# ossl drivers) and util-linux logger; cc builds the UDP loss benchmark's sender.
command -v rsyslogd >/dev/null || need_apt+=(rsyslog)
[ -e /usr/lib/x86_64-linux-gnu/rsyslog/lmnsd_gtls.so ] || [ -n "$(find /usr/lib -name lmnsd_gtls.so 2>/dev/null | head -1)" ] || need_apt+=(rsyslog-gnutls)
[ -e /usr/lib/x86_64-linux-gnu/rsyslog/lmnsd_ossl.so ] || [ -n "$(find /usr/lib -name lmnsd_ossl.so 2>/dev/null | head -1)" ] || need_apt+=(rsyslog-openssl)
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
echo "setup: done"
