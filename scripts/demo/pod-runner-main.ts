/**
 * `node dist/scripts/demo/pod-runner-main.js --kubeconfig FILE --dir DIR`: the local pod runner
 * (test/env/pod-runner.ts, a kubelet stand-in) as its own process, so the demo can start it in a
 * process group of its own (a terminal's Ctrl-C reaches only the demo, which then drains in order)
 * and leave it running with --keep. SIGTERM/SIGINT stop every worker gracefully, then exit.
 */
import { PodRunner } from '../../test/env/pod-runner';

function flag(argv: readonly string[], name: string): string | undefined {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
}

function main(): void {
  const argv = process.argv.slice(2);
  const kubeconfig = flag(argv, 'kubeconfig');
  if (!kubeconfig) throw new Error('usage: pod-runner-main.js --kubeconfig FILE [--dir DIR]');
  const runner = new PodRunner({ kubeconfig, dir: flag(argv, 'dir') });
  runner.start();
  console.log(JSON.stringify({ level: 'info', msg: 'pod runner started', pid: process.pid }));
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.log(JSON.stringify({ level: 'info', msg: 'pod runner stopping', signal }));
    runner.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main();
