#!/usr/bin/env node
/**
 * The `logpipeline` command: offline planning for GitOps CI, the parser for checking device
 * formats, and the compliance tools (integrity verification, legal queries).
 */
import { runPlan } from './plan';

const USAGE = `usage: logpipeline <command> [options]

commands:
  plan -f <file> [--previous <live.yaml>] [-o text|json|yaml]
                                      validate LogPipelines offline (with --previous: also the update rules)
                                      and print the topic, DDL and Kubernetes objects
  parse --format <fmt|auto> [--timezone Z]
                                      parse log lines from stdin, one JSON object per line (row or dead-letter reason)
  verify [options]                    verify the integrity chain, signatures and timestamp tokens of a table
  query --ip <ip> --from <t1> --to <t2> [options]
                                      the legal query: all records for an IP between two times
  seal --date D [options]             seal one day of a table: canonical export, signed and timestamped manifest
  seal export --date D --out DIR      write a stored seal as files an auditor checks with openssl
run 'logpipeline <command> --help' for a command's options.
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'plan':
      return runPlan(rest, process.stdout, process.stderr);
    case 'parse':
      return (await import('./parse')).runParse(rest, process.stdin, process.stdout);
    case 'verify':
      return (await import('./verify')).runVerify(rest, process.stdout);
    case 'seal':
      return (await import('./seal')).runSeal(rest, process.stdout);
    case 'query':
      return (await import('./query')).runQuery(rest, process.stdout);
    case undefined:
    case '-h':
    case '--help':
      process.stdout.write(USAGE);
      return command ? 0 : 2;
    default:
      process.stderr.write(`logpipeline: unknown command ${command}\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`logpipeline: ${(err as Error).message}\n`);
    process.exitCode = 1;
  },
);
