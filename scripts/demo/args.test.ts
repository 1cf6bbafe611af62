import { DEFAULT_OPTIONS, parseArgs, parseDemoDuration, USAGE } from './args';

describe('demo args', () => {
  it('gives the defaults without flags', () => {
    expect(parseArgs([])).toEqual({ kind: 'run', options: DEFAULT_OPTIONS });
  });

  it('parses every flag in both spellings', () => {
    const parsed = parseArgs([
      '--rate',
      '2000',
      '--lines-per-message=10',
      '--duration',
      '20s',
      '--drain-timeout=1m30s',
      '--malformed',
      '0.01',
      '--example',
      'x.yaml',
      '--namespace=ns1',
      '--max-replicas',
      '2',
      '--lag-per-replica=1000',
      '--seed=9',
      '--keep',
      '--json-summary',
      '--plain=false',
      '--direct',
    ]);
    expect(parsed).toEqual({
      kind: 'run',
      options: {
        rate: 2000,
        linesPerMessage: 10,
        durationMs: 20_000,
        drainTimeoutMs: 90_000,
        malformedRatio: 0.01,
        example: 'x.yaml',
        namespace: 'ns1',
        maxReplicas: 2,
        lagPerReplica: 1000,
        seed: 9,
        keep: true,
        jsonSummary: true,
        plain: false,
        direct: true,
      },
    });
  });

  it('reads durations as Go-style strings or bare seconds', () => {
    expect(parseDemoDuration('60')).toBe(60_000);
    expect(parseDemoDuration('2.5')).toBe(2_500);
    expect(parseDemoDuration('2m')).toBe(120_000);
    expect(parseDemoDuration('500ms')).toBe(500);
    expect(parseDemoDuration('1h2m3s')).toBe(3_723_000);
    expect(parseDemoDuration('soon')).toBeUndefined();
    expect(parseDemoDuration('-5s')).toBeUndefined();
  });

  it.each([
    [['--rate', '0'], /--rate: '0' is not an integer >= 1/],
    [['--rate', '1.5'], /--rate/],
    [['--rate'], /--rate needs a value/],
    [['--duration', 'forever'], /--duration: 'forever' is not a duration/],
    [['--duration', '0s'], /--duration/],
    [['--malformed', '2'], /between 0 and 1/],
    [['--malformed', ''], /between 0 and 1/],
    [['--keep=yes'], /--keep takes no value/],
    [['--colour'], /unknown flag --colour/],
    [['demo'], /unexpected argument 'demo'/],
    [['--example='], /--example needs a value/],
  ])('rejects %j', (argv, message) => {
    const parsed = parseArgs(argv);
    expect(parsed.kind).toBe('error');
    expect(parsed.kind === 'error' && parsed.message).toMatch(message);
  });

  it('answers --help wherever it appears', () => {
    expect(parseArgs(['--rate', '5', '--help'])).toEqual({ kind: 'help' });
  });

  it('documents every flag it parses, with its default', () => {
    for (const flag of [
      'rate',
      'lines-per-message',
      'duration',
      'drain-timeout',
      'malformed',
      'example',
      'namespace',
      'max-replicas',
      'lag-per-replica',
      'seed',
      'keep',
      'json-summary',
      'plain',
      'help',
    ]) {
      expect(USAGE).toContain(`--${flag}`);
    }
    expect(USAGE).toContain(`default ${DEFAULT_OPTIONS.rate})`);
    expect(USAGE).toContain(`default ${DEFAULT_OPTIONS.linesPerMessage})`);
    // Every flag the help mentions is accepted.
    const documented = [...USAGE.matchAll(/^ {2}--([a-z-]+)/gm)].map((m) => m[1]);
    expect(documented).toHaveLength(15);
    for (const flag of documented) {
      const parsed = parseArgs([`--${flag}`]);
      expect(parsed.kind === 'error' ? parsed.message : '').not.toMatch(/unknown flag/);
    }
  });
});
