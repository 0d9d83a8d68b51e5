// The scripted model the demo uses when no MAESTRO_LLM_BASE_URL is set: it plays the develop piece
// (plan -> implement -> review) on the demo task through the real OpenAI wire protocol.
import { scriptByMovement, type MovementSteps } from '../test/fixtures/movement-script.js';

export const DEMO_INSTRUCTION =
  'Write output/fizzbuzz.py: a Python script that prints FizzBuzz for 1 to 15, one line each. ' +
  'Check that it runs and that line 15 is FizzBuzz.';

const FIZZBUZZ = `for i in range(1, 16):
    print("FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else i)
`;

const STEPS: MovementSteps = {
  plan: [
    { content: 'Looking at the workspace first.', toolCalls: [{ name: 'Glob', arguments: { pattern: '**/*' } }] },
    {
      toolCalls: [
        {
          name: 'transition',
          arguments: {
            next: 'implement',
            summary: 'Plan: one script output/fizzbuzz.py with a loop over 1..15; verify by running it.',
            lessons: ['The workspace starts empty; the script goes to output/fizzbuzz.py.'],
          },
        },
      ],
    },
  ],
  implement: [
    { toolCalls: [{ name: 'Write', arguments: { path: 'output/fizzbuzz.py', content: FIZZBUZZ } }] },
    { toolCalls: [{ name: 'Bash', arguments: { command: 'python3 output/fizzbuzz.py | tail -n 3' } }] },
    {
      toolCalls: [
        {
          name: 'transition',
          arguments: { next: 'review', summary: 'Wrote output/fizzbuzz.py and ran it: the last line is FizzBuzz.' },
        },
      ],
    },
  ],
  review: [
    { toolCalls: [{ name: 'Read', arguments: { path: 'output/fizzbuzz.py' } }] },
    { toolCalls: [{ name: 'Bash', arguments: { command: 'python3 output/fizzbuzz.py | sed -n 15p' } }] },
    {
      toolCalls: [
        {
          name: 'complete',
          arguments: { status: 'done', summary: 'output/fizzbuzz.py prints FizzBuzz for 1..15; line 15 is FizzBuzz.' },
        },
      ],
    },
  ],
};

/** The demo's model: each movement of develop plays its steps above. */
export const demoModel = scriptByMovement(STEPS);
