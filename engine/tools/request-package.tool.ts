// RequestPackage: the model asks a person to install a package (npm, pip, apt). It parks the job
// (WAITING_HUMAN_TOOL_REQUEST, waitReason package_request) on a request bound to manager, name and
// version; once approved, the next identical call installs it into the workspace and records the
// install log on the request, so later calls answer "installed already" instead of installing twice.
import { z } from 'zod';
import { installPackage, installRefusal, PACKAGE_MANAGERS, validatePackageSpec, type PackageSpec } from '../package-installer.js';
import { noteSuffix, seekApproval } from './request-approval.js';
import { defineTool } from './tool.js';
import type { BuiltinToolName } from './tool-traits.js';

export const REQUEST_PACKAGE = 'RequestPackage' satisfies BuiltinToolName;

/** The first line of a request's result says whether the install worked (the log follows). */
const INSTALLED = 'installed:';
const FAILED = 'install failed:';

const schema = z.object({
  manager: z.enum(PACKAGE_MANAGERS).describe('npm and pip install into the workspace; apt installs system-wide (root workers only).'),
  name: z.string().min(1).max(214).describe('The package name, e.g. "left-pad" or "requests".'),
  version: z.string().min(1).max(100).optional().describe('An exact version, e.g. "1.2.3"; omit for the latest.'),
  reason: z.string().min(1).max(2000).describe('What you need it for; the person decides on this.'),
});

export const requestPackageTool = defineTool({
  name: REQUEST_PACKAGE,
  description:
    'Ask a person to approve installing a package (npm or pip into the workspace, apt system-wide). The job ' +
    'pauses until they decide, then this step starts again: call RequestPackage again with the same ' +
    'arguments and, if approved, it installs the package and tells you how to use it.',
  schema,
  async run(args, ctx) {
    const spec: PackageSpec = { manager: args.manager, name: args.name.trim(), version: args.version?.trim() || undefined };
    const what = `${spec.manager} package ${spec.name}${spec.version ? `@${spec.version}` : ''}`;
    const invalid = validatePackageSpec(spec);
    if (invalid) return { isError: true, content: invalid };
    // Asking a person to approve what this worker cannot do anyway would only waste their time.
    const refused = installRefusal(spec.manager);
    if (refused) return { isError: true, content: refused };
    if (!ctx.services) return { isError: true, content: 'approvals are not available in this run: do without the package.' };

    const binding = { manager: spec.manager, name: spec.name, version: spec.version };
    const outcome = await seekApproval(ctx.services, {
      kind: 'package',
      binding,
      args: binding,
      reason: args.reason.trim(),
      waitReason: 'package_request',
      what,
    });
    if ('output' in outcome) return outcome.output;
    const request = outcome.approved;
    if (request.result?.startsWith(INSTALLED)) {
      return { content: `${what} is installed already (request ${request.id}, approved${noteSuffix(request)}). ${request.result.split('\n\n')[0]}` };
    }

    const res = await installPackage(spec, { workspaceRoot: ctx.workspace.root, signal: ctx.signal });
    const head = res.ok ? `${INSTALLED} ${res.command}${res.usage ? `\n${res.usage}` : ''}` : `${FAILED} ${res.command || what}`;
    await ctx.services.setRequestResult(request.id, `${head}\n\n${res.log}`.trim());
    if (!res.ok) {
      return { isError: true, content: `${what} was approved${noteSuffix(request)} but the install failed:\n${res.log}` };
    }
    return { content: `${what} was approved${noteSuffix(request)} and is now installed (${res.command}). ${res.usage ?? ''}`.trim() };
  },
});
