import { buildEngineConfig, coldDiskPath } from './config';

describe('buildEngineConfig', () => {
  it('declares the cold disk under the data dir and the hot_cold policy', () => {
    const xml = buildEngineConfig({ dataDir: '/tmp/bed/data' });
    expect(coldDiskPath('/tmp/bed/data')).toBe('/tmp/bed/data/cold/');
    expect(xml).toContain('<cold><type>local</type><path>/tmp/bed/data/cold/</path></cold>');
    expect(xml).toMatch(
      /<hot_cold>\s*<volumes>\s*<hot><disk>default<\/disk><\/hot>\s*<cold><disk>cold<\/disk><\/cold>/,
    );
    expect(xml).toContain('<display_name>logpipeline-testbed</display_name>');
    // Parts move by TTL only, never because the machine's disk is nearly full.
    expect(xml).toMatch(/<\/volumes>\s*<move_factor>0<\/move_factor>\s*<\/hot_cold>/);
  });

  it('leaves storage out when asked and escapes text', () => {
    const xml = buildEngineConfig({ dataDir: '/d', coldDisk: false, displayName: 'a<b' });
    expect(xml).not.toContain('storage_configuration');
    expect(xml).toContain('<display_name>a&lt;b</display_name>');
  });
});
