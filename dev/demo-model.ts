// The scripted model the demo uses when no MAESTRO_LLM_BASE_URL is set: it plays the develop piece
// (plan -> implement -> review) on the demo task through the real OpenAI wire protocol.
import { currentMovementOf, scriptByMovement, type MovementSteps } from './movement-script.js';
import type { RecordedRequest, ScriptedResponse } from './scripted-llm-server.js';

export const DEMO_INSTRUCTION =
  'Write output/fizzbuzz.py: a Python script that prints FizzBuzz, one line per number. ' +
  'Check that it runs and that the line for 15 is FizzBuzz.';

const FIZZBUZZ = `for i in range(1, 16):
    print("FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else "Buzz" if i % 5 == 0 else i)
`;

export const DEMO_QUESTION = 'Should output/fizzbuzz.py count from 1 to 15, or to 100?';
export const DEMO_REPLY = 'From 1 to 15, please.';

const ask = (): ScriptedResponse => ({
  content: 'One thing to settle before planning.',
  toolCalls: [{ name: 'complete', arguments: { status: 'needs_user_input', summary: 'asked about the range', question: DEMO_QUESTION } }],
});
const requestBash: ScriptedResponse = {
  toolCalls: [{ name: 'RequestTool', arguments: { tool: 'Bash', reason: 'check that python3 is installed before planning a Python script' } }],
};

/** plan runs three times: it asks, then (answered) asks for Bash, then (approved) plans. */
function planSteps(prompt: string): ScriptedResponse[] {
  if (!prompt.includes(DEMO_REPLY)) return [{ toolCalls: [{ name: 'Glob', arguments: { pattern: '**/*' } }] }, ask()];
  if (!/tool Bash: approved/.test(prompt)) return [requestBash];
  return [
    requestBash, // the same call again: it short-circuits as approved (invariant: re-entry is idempotent), no second request
    { toolCalls: [{ name: 'Bash', arguments: { command: 'python3 --version' } }] },
    {
      toolCalls: [
        {
          name: 'transition',
          arguments: {
            next: 'implement',
            summary: 'Plan: one script output/fizzbuzz.py with a loop over 1..15; verify by running it.',
            lessons: ['The range is 1 to 15 (the person said so).', 'python3 is installed.'],
          },
        },
      ],
    },
  ];
}

const STEPS: MovementSteps = {
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

const later = scriptByMovement(STEPS);

/** The develop piece without parks (plan looks, then plans): for benchmarks that only measure prompts. */
export const straightDemoModel = scriptByMovement({
  ...STEPS,
  plan: [{ toolCalls: [{ name: 'Glob', arguments: { pattern: '**/*' } }] }, planSteps(`${DEMO_REPLY} tool Bash: approved`)[2]],
});

/** The demo's model: plan depends on what the person said so far; the other movements play STEPS. */
export function demoModel(req: RecordedRequest): ScriptedResponse {
  if (currentMovementOf(req) !== 'plan') return later(req);
  const messages = req.body.messages as Array<{ role: string; content?: unknown }>;
  const prompt = String(messages.find((m) => m.role === 'user')?.content ?? '');
  const steps = planSteps(prompt);
  const turn = messages.filter((m) => m.role === 'assistant').length;
  return { ...steps[Math.min(turn, steps.length - 1)], usage: { prompt_tokens: Math.ceil(JSON.stringify(messages).length / 4), completion_tokens: 30 } };
}
