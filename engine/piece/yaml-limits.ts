// Limits on untrusted YAML, checked on the lexer's token stream before any document or object is
// built: the composer recurses per nesting level (100k `[` would overflow the stack), duplicate-key
// checks are quadratic in a map's size, and aliases expand exponentially ("billion laughs").
import { Lexer } from 'yaml';

export interface YamlLimits {
  /** UTF-8 bytes of the whole text. */
  maxBytes: number;
  /** Nesting of collections (block indentation levels and flow brackets together). */
  maxDepth: number;
  /** Alias references (`*name`) in the text. */
  maxAliases: number;
  /** Nodes (scalars, collections, aliases) in the text. */
  maxNodes: number;
}

// A real piece is a few hundred nodes at depth 6 or so; these leave room and stay cheap to process
// (yaml's duplicate-key check is quadratic: 2,500 keys in one map take about 0.1 s).
export const DEFAULT_YAML_LIMITS: Readonly<YamlLimits> = Object.freeze({
  maxBytes: 512 * 1024,
  maxDepth: 48,
  maxAliases: 50,
  maxNodes: 5_000,
});

/** Weighted alias expansions yaml's toJS may make (its maxAliasCount); beyond it toJS throws. */
export const MAX_ALIAS_EXPANSION = 200;

export interface YamlLimitViolation {
  limit: keyof YamlLimits;
  line: number;
  message: string;
}

// The lexer's zero-width markers (DOCUMENT, FLOW_END, SCALAR); they are not part of the source.
const DOC_MARKER = '\u0002';
const FLOW_END_MARKER = '\u0018';
const SCALAR_MARKER = '\u001f';

/** The first limit the text breaks, with the line where it does, or null. Linear in the text. */
export function checkYamlLimits(text: string, limits: YamlLimits = DEFAULT_YAML_LIMITS): YamlLimitViolation | null {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > limits.maxBytes) {
    return { limit: 'maxBytes', line: 1, message: `the YAML is ${bytes} bytes, over the limit of ${limits.maxBytes} bytes` };
  }
  let line = 1;
  let col = 0;
  let atLineStart = true;
  let scalarBodyNext = false;
  let flow = 0;
  let aliases = 0;
  let nodes = 0;
  // Columns of the block nodes that enclose the current position.
  const block: number[] = [];

  const depthAt = (c: number): number => {
    if (flow > 0) return block.length + flow;
    while (block.length && block[block.length - 1]! > c) block.pop();
    if (!block.length || block[block.length - 1]! < c) block.push(c);
    return block.length;
  };
  let tokenLine = 1;
  const tooDeep = (depth: number): YamlLimitViolation | null =>
    depth > limits.maxDepth
      ? { limit: 'maxDepth', line: tokenLine, message: `the YAML nests deeper than ${limits.maxDepth} levels (the nesting-depth limit)` }
      : null;

  for (const tok of new Lexer().lex(text)) {
    if (tok === DOC_MARKER || tok === FLOW_END_MARKER) continue;
    if (tok === SCALAR_MARKER) {
      scalarBodyNext = true;
      continue;
    }
    const startCol = col;
    tokenLine = line;
    const newlines = countNewlines(tok);
    if (newlines > 0) {
      line += newlines;
      col = tok.length - tok.lastIndexOf('\n') - 1;
    } else {
      col += tok.length;
    }
    if (scalarBodyNext) {
      scalarBodyNext = false;
      nodes++;
      const v = tooDeep(depthAt(startCol)) ?? tooManyNodes(nodes, limits, tokenLine);
      if (v) return v;
      atLineStart = false;
      if (newlines > 0) atLineStart = tok.endsWith('\n');
      continue;
    }
    if (tok === '\n' || tok === '\r\n' || tok === '') {
      atLineStart = true;
      continue;
    }
    const c0 = tok[0];
    if (c0 === ' ' || c0 === '\t' || c0 === '#') {
      if (newlines > 0) atLineStart = true;
      continue;
    }
    if (tok === '---' || tok === '...') {
      if (atLineStart) block.length = 0;
      atLineStart = false;
      continue;
    }
    atLineStart = false;
    if (tok === ':' || tok === ',' || c0 === '%' || c0 === '!' || c0 === '&' || c0 === '|' || c0 === '>') continue;
    if (tok === '}' || tok === ']') {
      flow = Math.max(0, flow - 1);
      // Counted like nodes: each unmatched one is a syntax error the parser must report.
      nodes++;
      const v = tooManyNodes(nodes, limits, tokenLine);
      if (v) return v;
      continue;
    }
    if (tok === '[' || tok === '{') {
      nodes++;
      const depth = flow === 0 ? depthAt(startCol) : block.length + flow;
      flow++;
      const v = tooDeep(depth) ?? tooManyNodes(nodes, limits, tokenLine);
      if (v) return v;
      continue;
    }
    if (c0 === '*') {
      aliases++;
      nodes++;
      if (aliases > limits.maxAliases) {
        return { limit: 'maxAliases', line: tokenLine, message: `the YAML has more than ${limits.maxAliases} aliases (the alias limit)` };
      }
      const v = tooDeep(depthAt(startCol)) ?? tooManyNodes(nodes, limits, tokenLine);
      if (v) return v;
      continue;
    }
    if (tok === '-' || tok === '?') {
      nodes++;
      const v = tooDeep(depthAt(startCol)) ?? tooManyNodes(nodes, limits, tokenLine);
      if (v) return v;
    }
  }
  return null;
}

function tooManyNodes(nodes: number, limits: YamlLimits, line: number): YamlLimitViolation | null {
  return nodes > limits.maxNodes
    ? { limit: 'maxNodes', line, message: `the YAML has more than ${limits.maxNodes} nodes (the node-count limit)` }
    : null;
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i !== -1; i = s.indexOf('\n', i + 1)) n++;
  return n;
}
