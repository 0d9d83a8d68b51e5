import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { renderChecklists } from '../../engine/checklists.js';
import { appendLessonsLog, capLessons, LESSONS_MAX_CHARS, lessonsOfMovement } from '../../engine/lessons.js';

describe('lessons', () => {
  test('the total is capped at about 2,000 characters by dropping the oldest; order is kept', () => {
    const lessons = Array.from({ length: 30 }, (_, i) => `lesson ${String(i).padStart(2, '0')} ${'x'.repeat(90)}`);
    const kept = capLessons(lessons);
    const rendered = kept.map((l) => `- ${l}`).join('\n');
    assert.ok(rendered.length <= LESSONS_MAX_CHARS, `${rendered.length}`);
    assert.ok(rendered.length > LESSONS_MAX_CHARS - 120, 'uses the room it has');
    assert.equal(kept.at(-1), lessons.at(-1), 'the newest is kept');
    assert.deepEqual(kept, lessons.slice(lessons.length - kept.length), 'a suffix, oldest first');
  });

  test('one huge lesson is cut rather than wiping the others', () => {
    const kept = capLessons(['small one', 'y'.repeat(5000)]);
    assert.equal(kept.length, 2);
    assert.ok(kept[1].length <= 500);
  });

  test('COMPLETE without lessons keeps the summary as the lesson', () => {
    assert.deepEqual(lessonsOfMovement('COMPLETE', [], 'all done'), ['all done']);
    assert.deepEqual(lessonsOfMovement('review', [], 'moved on'), []);
    assert.deepEqual(lessonsOfMovement('COMPLETE', [' a ', ''], 'x'), ['a']);
  });

  test('lessons are appended to logs/lessons.jsonl', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-lessons-'));
    try {
      await appendLessonsLog(dir, 'plan', ['one', 'two'], new Date('2026-11-30T00:00:00Z'));
      await appendLessonsLog(dir, 'build', ['three'], new Date('2026-11-30T00:01:00Z'));
      const lines = (await readFile(path.join(dir, 'logs/lessons.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
      assert.deepEqual(lines.map((l) => [l.movement, l.text]), [['plan', 'one'], ['plan', 'two'], ['build', 'three']]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('checklists', () => {
  test('logs/checklists/*.json are rendered with their current state', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'maestro-checklists-'));
    try {
      assert.equal(await renderChecklists(dir), null);
      await mkdir(path.join(dir, 'logs/checklists'), { recursive: true });
      await writeFile(
        path.join(dir, 'logs/checklists/release.json'),
        JSON.stringify({ title: 'Release', items: [{ text: 'tests pass', done: true }, { text: 'changelog', done: false }, 'tag'] }),
      );
      await writeFile(path.join(dir, 'logs/checklists/broken.json'), '{nope');
      const text = await renderChecklists(dir);
      assert.match(text ?? '', /### Release \(1\/3 done, logs\/checklists\/release\.json\)\n- \[x\] tests pass\n- \[ \] changelog\n- \[ \] tag/);
      assert.match(text ?? '', /### broken\.json\n\(unreadable/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
