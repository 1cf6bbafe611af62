/**
 * A small Dockerfile reader for the image tests: enough of the syntax (stages, line continuations,
 * comments, JSON and shell forms, --flags) to check what each stage copies and runs without a
 * Docker engine.
 */

/** One instruction: keyword, leading --flags, and the remaining arguments. */
export interface Instruction {
  keyword: string;
  flags: Record<string, string>;
  args: string[];
  /** The argument text as written (for RUN, LABEL). */
  raw: string;
}

/** One build stage: its base, optional name, and instructions in order. */
export interface Stage {
  name?: string;
  base: string;
  instructions: Instruction[];
}

/** A parsed Dockerfile: global ARG defaults (before the first FROM) and the stages. */
export interface Dockerfile {
  globalArgs: Record<string, string>;
  stages: Stage[];
}

/** Joins continuation lines and drops comments and blank lines (parser directives included). */
function logicalLines(text: string): string[] {
  const out: string[] = [];
  let current = '';
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (current === '' && (trimmed === '' || trimmed.startsWith('#'))) continue;
    if (current !== '' && trimmed.startsWith('#')) continue;
    if (trimmed.endsWith('\\')) {
      current += trimmed.slice(0, -1) + ' ';
      continue;
    }
    out.push(current + trimmed);
    current = '';
  }
  if (current.trim()) out.push(current.trim());
  return out;
}

/** Splits shell-form words, removing double quotes (`a="b c"` is one word `a=b c`); no expansion. */
function words(text: string): string[] {
  const tokens = text.match(/(?:"(?:[^"\\]|\\.)*"|[^\s"])+/g) ?? [];
  return tokens.map((t) => t.replace(/"((?:[^"\\]|\\.)*)"/g, '$1'));
}

function parseInstruction(line: string): Instruction {
  const space = line.search(/\s/);
  const keyword = (space < 0 ? line : line.slice(0, space)).toUpperCase();
  let rest = space < 0 ? '' : line.slice(space).trim();
  const flags: Record<string, string> = {};
  for (let m = /^--([a-z-]+)=(\S+)\s*/.exec(rest); m; m = /^--([a-z-]+)=(\S+)\s*/.exec(rest)) {
    flags[m[1]] = m[2];
    rest = rest.slice(m[0].length);
  }
  const args = rest.startsWith('[') ? (JSON.parse(rest) as string[]) : words(rest);
  return { keyword, flags, args, raw: rest };
}

/** Parses a Dockerfile's text into global ARGs and stages. */
export function parseDockerfile(text: string): Dockerfile {
  const globalArgs: Record<string, string> = {};
  const stages: Stage[] = [];
  for (const line of logicalLines(text)) {
    const ins = parseInstruction(line);
    if (ins.keyword === 'FROM') {
      const [base, as, name] = ins.args;
      stages.push({ base, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else if (stages.length === 0) {
      if (ins.keyword === 'ARG') Object.assign(globalArgs, parseAssignments(ins.args));
    } else {
      stages[stages.length - 1].instructions.push(ins);
    }
  }
  return { globalArgs, stages };
}

/** KEY=VALUE words (ARG, ENV, LABEL) as a map; a bare KEY maps to ''. */
export function parseAssignments(args: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of args) {
    const eq = a.indexOf('=');
    if (eq < 0) out[a] = '';
    else out[a.slice(0, eq)] = a.slice(eq + 1);
  }
  return out;
}

/** The stage named `name`; throws when absent. */
export function stage(df: Dockerfile, name: string): Stage {
  const s = df.stages.find((x) => x.name === name);
  if (!s)
    throw new Error(`no stage named ${name} (have: ${df.stages.map((x) => x.name ?? x.base).join(', ')})`);
  return s;
}

/** The chain of stages a stage builds on, itself first, ending at one FROM an external image. */
export function ancestry(df: Dockerfile, s: Stage): Stage[] {
  const chain = [s];
  for (;;) {
    const parent = df.stages.find((x) => x.name === chain[chain.length - 1].base);
    if (!parent || chain.includes(parent)) return chain;
    chain.push(parent);
  }
}

/** The last value of an instruction along a stage's ancestry (USER, WORKDIR, ENTRYPOINT inherit). */
export function effective(df: Dockerfile, s: Stage, keyword: string): Instruction | undefined {
  for (const st of ancestry(df, s)) {
    const hit = [...st.instructions].reverse().find((i) => i.keyword === keyword);
    if (hit) return hit;
  }
  return undefined;
}

/** LABELs merged along a stage's ancestry, the stage's own winning. */
export function labels(df: Dockerfile, s: Stage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const st of ancestry(df, s).reverse()) {
    for (const i of st.instructions.filter((x) => x.keyword === 'LABEL'))
      Object.assign(out, parseAssignments(i.args));
  }
  return out;
}

/**
 * The source trees whose compiled output stage `target` ships: every `COPY --from=<build>
 * <workdir>/dist/<tree>` along its ancestry, mapped back to `<tree>` (tsc's rootDir ".", outDir "dist").
 */
export function shippedTrees(df: Dockerfile, target: string, build = 'build'): string[] {
  const workdir = effective(df, stage(df, build), 'WORKDIR')?.args[0] ?? '';
  const prefix = `${workdir}/dist/`;
  return ancestry(df, stage(df, target))
    .flatMap((s) => s.instructions)
    .filter((i) => i.keyword === 'COPY' && i.flags.from === build)
    .flatMap((i) => i.args.slice(0, -1))
    .filter((src) => src.startsWith(prefix))
    .map((src) => src.slice(prefix.length));
}
