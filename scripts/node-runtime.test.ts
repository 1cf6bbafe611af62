/**
 * One Node for everything: .ci/run runs exactly the README's test command, both README commands
 * go through scripts/with-node, and scripts/with-node reads the version setup.sh installs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './helm';

const read = (file: string) => fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');

describe('the Node the commands run on', () => {
  const readme = read('README.md');
  const block = /## Two commands on a fresh machine\s+```bash\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
  const commands = block.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));

  it('runs both README commands through scripts/with-node after setup', () => {
    expect(commands).toEqual([
      './scripts/setup.sh && scripts/with-node npm run demo',
      './scripts/setup.sh && scripts/with-node npm test',
    ]);
  });

  it('has .ci/run run exactly the README test command', () => {
    const lines = read('.ci/run').trim().split('\n');
    expect(lines[lines.length - 1]).toBe(commands[1]);
  });

  it('pins one version that setup.sh and with-node both read', () => {
    expect(read('.node-version').trim()).toMatch(/^\d+\.\d+\.\d+$/);
    expect(read('scripts/setup.sh')).toContain('source scripts/node-version.sh');
    expect(read('scripts/with-node')).toContain('source "$root/scripts/node-version.sh"');
  });
});
