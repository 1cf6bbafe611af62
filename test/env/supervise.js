#!/usr/bin/env node
// Supervisor for test-bed services: runs one child in this process group and kills it
// when the owning process (jest, env:up's caller, the demo) goes away, so an interrupted
// run never leaves orphan etcd/Kafka/ClickHouse processes behind.
// Usage: node supervise.js <parentPid|0> <logFile> -- <command> [args...]
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');

const [parentArg, logFile, sep, command, ...args] = process.argv.slice(2);
if (sep !== '--' || !command) {
  console.error('usage: supervise.js <parentPid|0> <logFile> -- <command> [args...]');
  process.exit(2);
}
const parentPid = Number(parentArg);
const log = fs.openSync(logFile, 'a');
const child = spawn(command, args, { stdio: ['ignore', log, log] });

let stopping = false;
function stop(signal) {
  if (stopping) return;
  stopping = true;
  child.kill(signal);
  // A service that ignores SIGTERM is killed after a grace period.
  setTimeout(() => child.kill('SIGKILL'), 10_000).unref();
}
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGTERM'));
child.on('error', (err) => {
  fs.writeSync(log, `supervise: cannot start ${command}: ${err.message}\n`);
  process.exit(127);
});
child.on('exit', (code, signal) => {
  fs.writeSync(log, `supervise: ${command} exited code=${code} signal=${signal}\n`);
  process.exit(code ?? 1);
});
if (parentPid > 0) {
  setInterval(() => {
    try {
      process.kill(parentPid, 0);
    } catch {
      stop('SIGTERM');
    }
  }, 500);
}
