import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { executeTool, FILE_TOOLS, toOpenAiTool } from '../../engine/tools/index.js';
import type { ToolContext, ToolDefinition, ToolOutput } from '../../engine/tools/tool.js';
import { CHARS_PER_TOKEN, estimateTokens, truncateLines, truncateText } from '../../engine/tools/truncate.js';
import { EDIT_MAX_BYTES } from '../../engine/tools/edit.tool.js';
import { prepareWorkspace, type Workspace } from '../../engine/tools/workspace.js';
import { hostProcessesWith, uniqueSleepSeconds } from '../helpers/host-processes.js';

let base: string;
let ws: Workspace;

before(async () => {
  base = await fs.mkdtemp(path.join(os.tmpdir(), 'maestro-tools-'));
  ws = await prepareWorkspace(path.join(base, 'job'));
});
after(async () => {
  await fs.rm(base, { recursive: true, force: true });
});

function tool(name: string): ToolDefinition {
  const def = FILE_TOOLS.find((t) => t.name === name);
  assert.ok(def, `tool ${name} exists`);
  return def;
}
function ctx(over: Partial<ToolContext> = {}): ToolContext {
  return { jobId: 'job-1', workspace: ws, signal: new AbortController().signal, budgetTokens: 2_000, ...over };
}
function call(name: string, args: unknown, over: Partial<ToolContext> = {}): Promise<ToolOutput> {
  return executeTool(tool(name), JSON.stringify(args), ctx(over));
}
const write = (rel: string, content: string | Buffer) =>
  fs.mkdir(path.dirname(path.join(ws.root, rel)), { recursive: true }).then(() => fs.writeFile(path.join(ws.root, rel), content));

describe('truncate', () => {
  it('never exceeds the budget, and leaves text that fits untouched', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 3000 }), fc.integer({ min: 1, max: 400 }), fc.constantFrom('head' as const, 'head-tail' as const), (text, budget, mode) => {
        const r = truncateText(text, budget, { mode, hint: 'Use Grep.' });
        assert.ok(r.text.length <= budget * CHARS_PER_TOKEN);
        if (text.length <= budget * CHARS_PER_TOKEN) assert.deepEqual(r, { text, truncated: false });
        else assert.equal(r.truncated, true);
      }),
    );
  });

  it('head-tail keeps both ends and a notice with the hint', () => {
    const text = Array.from({ length: 5000 }, (_, i) => `line ${i}`).join('\n');
    const r = truncateText(text, 200, { mode: 'head-tail', hint: 'Pipe through tail.' });
    assert.ok(r.text.startsWith('line 0\nline 1\n'));
    assert.ok(r.text.endsWith('line 4999'));
    assert.match(r.text, /output truncated.*Pipe through tail\./);
  });

  it('truncateLines counts whole lines, or the characters of a too-long first line', () => {
    assert.deepEqual(truncateLines(['aaa', 'bbb', 'ccc'], 7), { count: 2, partialChars: null });
    assert.deepEqual(truncateLines(['a'.repeat(50)], 10), { count: 0, partialChars: 10 });
    assert.equal(estimateTokens('12345678'), 2);
  });
});

describe('Read', () => {
  it('returns numbered lines and honours offset and limit', async () => {
    await write('r/small.txt', 'alpha\nbeta\ngamma\ndelta\n');
    const all = await call('Read', { path: 'r/small.txt' });
    assert.equal(all.content, '     1\talpha\n     2\tbeta\n     3\tgamma\n     4\tdelta');
    const part = await call('Read', { path: 'r/small.txt', offset: 2, limit: 2 });
    assert.match(part.content, /^ {5}2\tbeta\n {5}3\tgamma\n/);
    assert.match(part.content, /continue with Read offset=4/);
  });

  it('keeps a 200,000-line file within budget and says which offset to read next', async () => {
    await write('r/long.txt', Array.from({ length: 200_000 }, (_, i) => `row ${i + 1}`).join('\n'));
    const budgetTokens = 1_000;
    const out = await call('Read', { path: 'r/long.txt' }, { budgetTokens });
    assert.ok(out.content.length <= budgetTokens * CHARS_PER_TOKEN, `${out.content.length} chars`);
    assert.equal(out.truncated, true);
    const m = /showing lines 1-(\d+) of 200000 .*Read offset=(\d+)/.exec(out.content);
    assert.ok(m, out.content.slice(-300));
    assert.equal(Number(m[2]), Number(m[1]) + 1);
    const next = await call('Read', { path: 'r/long.txt', offset: Number(m[2]), limit: 1 }, { budgetTokens });
    assert.match(next.content, new RegExp(`^\\s+${m[2]}\\trow ${m[2]}\\n`));
  });

  it('cuts a 5 MB single-line file at a character boundary and continues by byte_offset', async () => {
    const line = 'é0123456789'.repeat(Math.ceil((5 * 1024 * 1024) / 12));
    await write('r/one-line.txt', line);
    const budgetTokens = 1_000;
    const first = await call('Read', { path: 'r/one-line.txt' }, { budgetTokens });
    assert.ok(first.content.length <= budgetTokens * CHARS_PER_TOKEN);
    assert.equal(first.truncated, true);
    const m = /was cut after (\d+)\. Continue with Read byte_offset=(\d+)/.exec(first.content);
    assert.ok(m, first.content.slice(-300));
    const shown = line.slice(0, Number(m[1]));
    assert.ok(first.content.startsWith(`     1\t${shown}\n`));
    assert.equal(Number(m[2]), Buffer.byteLength(shown));

    const second = await call('Read', { path: 'r/one-line.txt', byte_offset: Number(m[2]) }, { budgetTokens });
    assert.ok(second.content.length <= budgetTokens * CHARS_PER_TOKEN);
    const body = second.content.split('\n')[1];
    assert.ok(line.slice(shown.length).startsWith(body), 'the byte window continues exactly where the first read stopped');
    assert.match(second.content, /byte_offset=\d+/);
  });

  it('refuses binary files, directories and missing files with actionable errors', async () => {
    await write('r/blob.bin', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]));
    const bin = await call('Read', { path: 'r/blob.bin' });
    assert.equal(bin.isError, true);
    assert.match(bin.content, /binary file/);
    assert.match((await call('Read', { path: 'r' })).content, /is a directory; use Glob/);
    const missing = await call('Read', { path: 'r/nope.txt' });
    assert.equal(missing.isError, true);
    assert.match(missing.content, /file not found: r\/nope\.txt/);
  });
});

describe('Write and Edit', () => {
  it('Write creates parent directories and reports bytes written', async () => {
    const out = await call('Write', { path: 'w/deep/new.txt', content: 'héllo' });
    assert.equal(out.isError, undefined);
    assert.equal(out.content, 'Wrote 6 bytes to w/deep/new.txt');
    assert.equal(await fs.readFile(path.join(ws.root, 'w/deep/new.txt'), 'utf8'), 'héllo');
  });

  it('Edit replaces a unique match literally', async () => {
    await write('e/a.txt', 'const x = 1;\nconst y = 2;\n');
    const out = await call('Edit', { path: 'e/a.txt', old_string: 'const y = 2;', new_string: 'const y = "$&";' });
    assert.equal(out.content, 'Replaced 1 occurrence in e/a.txt');
    assert.equal(await fs.readFile(path.join(ws.root, 'e/a.txt'), 'utf8'), 'const x = 1;\nconst y = "$&";\n');
  });

  it('Edit refuses an ambiguous match, saying how many, unless replace_all', async () => {
    await write('e/b.txt', 'foo bar foo baz foo');
    const amb = await call('Edit', { path: 'e/b.txt', old_string: 'foo', new_string: 'qux' });
    assert.equal(amb.isError, true);
    assert.match(amb.content, /occurs 3 times in e\/b\.txt.*replace_all/);
    assert.equal(await fs.readFile(path.join(ws.root, 'e/b.txt'), 'utf8'), 'foo bar foo baz foo');
    const all = await call('Edit', { path: 'e/b.txt', old_string: 'foo', new_string: 'qux', replace_all: true });
    assert.equal(all.content, 'Replaced 3 occurrences in e/b.txt');
    assert.equal(await fs.readFile(path.join(ws.root, 'e/b.txt'), 'utf8'), 'qux bar qux baz qux');
  });

  it('Edit refuses files over its size cap with what to do instead', async () => {
    await write('e/big.txt', 'x'.repeat(EDIT_MAX_BYTES + 1));
    const out = await call('Edit', { path: 'e/big.txt', old_string: 'xx', new_string: 'y' });
    assert.equal(out.isError, true);
    assert.match(out.content, /Edit handles files up to \d+ bytes.*Bash/);
  });

  it('Write and Edit through a link out change nothing outside', async () => {
    const secret = path.join(base, 'w-secret.txt');
    await fs.writeFile(secret, 'secret');
    await fs.symlink(secret, path.join(ws.root, 'w-link'));
    for (const [name, args] of [['Write', { path: 'w-link', content: 'pwned' }], ['Edit', { path: 'w-link', old_string: 'secret', new_string: 'pwned' }]] as const) {
      const out = await call(name, args);
      assert.equal(out.isError, true);
      assert.match(out.content, /outside the job workspace/);
    }
    assert.equal(await fs.readFile(secret, 'utf8'), 'secret');
  });

  it('Edit says when old_string is missing', async () => {
    const out = await call('Edit', { path: 'e/b.txt', old_string: 'nothing like this', new_string: 'x' });
    assert.equal(out.isError, true);
    assert.match(out.content, /not found in e\/b\.txt/);
  });
});

describe('Bash', () => {
  it('runs in the workspace root with combined output and the exit code', async () => {
    const out = await call('Bash', { command: 'pwd; echo out; echo err >&2' });
    assert.equal(out.isError, undefined);
    assert.equal(out.content, `exit code: 0\n${ws.root}\nout\nerr\n`);
  });

  it('reports a non-zero exit as information, not a tool error', async () => {
    const out = await call('Bash', { command: 'echo failing; exit 3' });
    assert.equal(out.isError, undefined);
    assert.match(out.content, /^exit code: 3\nfailing/);
  });

  it('hides Maestro secrets from commands', async () => {
    process.env.MAESTRO_LLM_API_KEY = 'sk-should-not-leak';
    try {
      const out = await call('Bash', { command: 'echo "key=${MAESTRO_LLM_API_KEY-unset} home=${HOME:+set}"' });
      assert.match(out.content, /key=unset home=set/);
    } finally {
      delete process.env.MAESTRO_LLM_API_KEY;
    }
  });

  it('kills every process the command started on timeout', async () => {
    const started = Date.now();
    const secs = uniqueSleepSeconds();
    const out = await call('Bash', { command: `sleep ${secs} & echo started; wait`, timeout_ms: 300 });
    assert.ok(Date.now() - started < 10_000);
    assert.equal(out.isError, true);
    assert.match(out.content, /timed out after 300 ms.*killed[\s\S]*started/);
    assert.deepEqual(await hostProcessesWith(`sleep ${secs}`), []);
  });

  it('stops when the context signal aborts', async () => {
    const ac = new AbortController();
    const secs = uniqueSleepSeconds();
    const running = call('Bash', { command: `sleep ${secs}` }, { signal: ac.signal });
    await until(async () => (await hostProcessesWith(`sleep ${secs}`)).length > 0);
    ac.abort();
    const out = await running;
    assert.equal(out.isError, true);
    assert.match(out.content, /cancelled/);
    assert.deepEqual(await hostProcessesWith(`sleep ${secs}`), []);
  });

  it('keeps the head and tail of long output within budget and suggests filters', async () => {
    const out = await call('Bash', { command: 'seq 1 200000' }, { budgetTokens: 500 });
    assert.ok(out.content.length <= 500 * CHARS_PER_TOKEN);
    assert.equal(out.truncated, true);
    assert.match(out.content, /^exit code: 0 \(output was 1288895 bytes\)\n1\n2\n3\n/);
    assert.ok(out.content.endsWith('199999\n200000\n'));
    assert.match(out.content, /head, tail, grep, awk or sed/);
  });
});

describe('Grep and Glob', () => {
  before(async () => {
    await write('g/src/a.ts', 'export const Alpha = 1;\n// TODO: alpha\n');
    await write('g/src/b.md', 'todo in markdown\n');
    await write('g/src/deep/c.ts', 'nothing\nconst alpha = 2;\n');
    await write('g/node_modules/dep/index.ts', 'alpha in a dependency\n');
    await write('g/.git/config', 'alpha in git\n');
    await write('g/bin.dat', Buffer.concat([Buffer.from('alpha'), Buffer.from([0, 1, 2])]));
    // Symlinks out of the workspace must not be searched or walked.
    const outside = path.join(base, 'outside');
    await fs.mkdir(outside, { recursive: true });
    await fs.writeFile(path.join(outside, 'leak.ts'), 'alpha outside\n');
    await fs.symlink(outside, path.join(ws.root, 'g', 'dir-out'));
    await fs.symlink(path.join(outside, 'leak.ts'), path.join(ws.root, 'g', 'file-out.ts'));
  });

  it('Grep returns file:line: text, skipping .git, node_modules and binaries', async () => {
    const out = await call('Grep', { pattern: 'alpha', path: 'g', ignore_case: true });
    assert.equal(out.content, ['g/src/a.ts:1: export const Alpha = 1;', 'g/src/a.ts:2: // TODO: alpha', 'g/src/deep/c.ts:2: const alpha = 2;'].join('\n'));
  });

  it('Grep filters by file name glob and stops at max_results', async () => {
    assert.equal((await call('Grep', { pattern: 'alpha', path: 'g', glob: '*.ts' })).content.split('\n').length, 2);
    assert.equal((await call('Grep', { pattern: 'todo', path: 'g', glob: '*.md' })).content, 'g/src/b.md:1: todo in markdown');
    const capped = await call('Grep', { pattern: 'alpha', path: 'g', ignore_case: true, max_results: 1 });
    assert.match(capped.content, /^g\/src\/a\.ts:1: .*\n\[stopped after 1 matches/);
  });

  it('Grep reports no matches and bad patterns', async () => {
    assert.match((await call('Grep', { pattern: 'zzz', path: 'g' })).content, /no matches/);
    const bad = await call('Grep', { pattern: '(' });
    assert.equal(bad.isError, true);
    assert.match(bad.content, /not a valid regular expression \(ripgrep uses Rust regex syntax/);
    assert.match(bad.content, /unclosed group/, 'rg\'s own message is quoted');
  });

  it('Grep searches one file, also through a link inside, and refuses one out', async () => {
    await fs.symlink('src/a.ts', path.join(ws.root, 'g', 'a-link.ts'));
    assert.equal((await call('Grep', { pattern: 'TODO', path: 'g/src/a.ts' })).content, 'g/src/a.ts:2: // TODO: alpha');
    assert.equal((await call('Grep', { pattern: 'TODO', path: 'g/a-link.ts' })).content, 'g/src/a.ts:2: // TODO: alpha');
    const out = await call('Grep', { pattern: 'alpha', path: 'g/file-out.ts' });
    assert.equal(out.isError, true);
    assert.match(out.content, /outside the job workspace/);
    const dir = await call('Grep', { pattern: 'alpha', path: 'g/dir-out' });
    assert.equal(dir.isError, true);
    assert.doesNotMatch(dir.content, /alpha outside/);
  });

  it('Grep patterns are literal to the shell and globs only filter', async () => {
    assert.match((await call('Grep', { pattern: '--files', path: 'g' })).content, /no matches/);
    const braces = await call('Grep', { pattern: 'alpha', path: 'g', glob: '{..,src}/**', ignore_case: true });
    assert.doesNotMatch(braces.content, /outside/);
    assert.match((await call('Grep', { pattern: 'alpha', path: 'g', glob: 'src/deep/*.ts' })).content, /^g\/src\/deep\/c\.ts:2: const alpha = 2;$/);
  });

  it('Glob lists matching files relative to the workspace, sorted', async () => {
    const out = await call('Glob', { pattern: '**/*.ts', path: 'g' });
    assert.ok(!out.content.includes('leak.ts'), 'a symlinked directory out of the workspace is not walked');
    assert.deepEqual(out.content.split('\n').filter((l) => l !== 'g/file-out.ts'), ['g/src/a.ts', 'g/src/deep/c.ts']);
    assert.match((await call('Glob', { pattern: '*.nothing' })).content, /no files match/);
  });

  it('Glob caps long results with a count of the rest', async () => {
    await Promise.all(Array.from({ length: 520 }, (_, i) => write(`many/f${i}.txt`, '')));
    const out = await call('Glob', { pattern: 'many/*.txt' }, { budgetTokens: 10_000 });
    const lines = out.content.split('\n');
    assert.equal(lines.length, 501);
    assert.match(lines[500], /and 20 more \(520 in all\)/);
  });

  it('Glob refuses patterns that climb out of the workspace', async () => {
    const out = await call('Glob', { pattern: '../*' });
    assert.equal(out.isError, true);
    assert.match(out.content, /inside the job workspace/);
  });

  it('Glob patterns only filter what rg lists inside: braces and extglobs cannot climb out', async () => {
    for (const pattern of ['{..,src}/**', '{..,.}/*', '.{.,}/**', '+(..)/**', '@(..|src)/**/*', '**/../**']) {
      const out = await call('Glob', { pattern, path: 'g' });
      assert.doesNotMatch(out.content, /leak\.ts|outside/, pattern);
      for (const line of out.content.split('\n')) if (!/^no files match|inside the job workspace/.test(line)) assert.match(line, /^g\//, pattern);
    }
    assert.deepEqual((await call('Glob', { pattern: '{src,nothing}/*.{ts,md}', path: 'g' })).content.split('\n'), ['g/src/a.ts', 'g/src/b.md']);
    assert.match((await call('Glob', { pattern: '*', path: 'g/dir-out' })).content, /outside the job workspace/);
  });
});

describe('executeTool and toOpenAiTool', () => {
  it('answers invalid JSON with an error result', async () => {
    const out = await executeTool(tool('Read'), '{"path": ', ctx());
    assert.equal(out.isError, true);
    assert.match(out.content, /^arguments are not valid JSON: /);
  });

  it('names each wrong field and what was expected', async () => {
    const out = await executeTool(tool('Read'), JSON.stringify({ path: 42, offset: 'x' }), ctx());
    assert.equal(out.isError, true);
    assert.match(out.content, /- path: .*expected string/);
    assert.match(out.content, /- offset: .*expected number/);
  });

  it('turns a workspace violation into an error result', async () => {
    const out = await call('Write', { path: '../escape.txt', content: 'x' });
    assert.equal(out.isError, true);
    assert.match(out.content, /outside the job workspace/);
    await assert.rejects(fs.stat(path.join(base, 'escape.txt')));
  });

  it('exposes exactly the six file tools with deterministic JSON schemas', () => {
    assert.deepEqual(FILE_TOOLS.map((t) => t.name), ['Read', 'Write', 'Edit', 'Bash', 'Grep', 'Glob', 'ReadImage']);
    for (const def of FILE_TOOLS) {
      const a = JSON.stringify(toOpenAiTool(def));
      assert.equal(JSON.stringify(toOpenAiTool(def)), a);
      assert.ok(!a.includes(String(Number.MAX_SAFE_INTEGER)), 'no safe-integer noise in the schema');
      const t = toOpenAiTool(def);
      assert.equal(t.type, 'function');
      const params = (t as { function: { parameters: Record<string, any> } }).function.parameters;
      assert.equal(params.$schema, undefined);
      assert.equal(params.type, 'object');
      for (const [name, prop] of Object.entries(params.properties as Record<string, { description?: string }>)) {
        assert.ok(prop.description, `${def.name}.${name} has a description`);
      }
    }
    const bash = (toOpenAiTool(tool('Bash')) as { function: { parameters: Record<string, any> } }).function.parameters;
    assert.deepEqual(bash.required, ['command']);
  });
});

async function until(cond: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) assert.fail('condition not met before the deadline');
    await new Promise((r) => setTimeout(r, 20));
  }
}

