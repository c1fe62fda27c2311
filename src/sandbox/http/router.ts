/**
 * Routes a method and path to an operation of src/resources/operations.ts: 404 for an unknown path,
 * 405 (with Allow) for a known path and a wrong method. Path segments are URL-decoded.
 */
import { operations, type Operation, type OperationName } from '../../resources/operations.js';
import { OFFER_PATH_ALIAS } from '../choices.js';
import { SandboxError, notFound } from '../errors.js';

export interface Match {
  name: OperationName;
  op: Operation;
  /** identifier, identifier_value and id, decoded. */
  params: Record<string, string>;
}

interface Route {
  name: OperationName;
  op: Operation;
  segments: string[];
  paramCount: number;
}

const split = (path: string) => path.split('/').filter((s, i) => i > 0 || s !== '');

function route(name: OperationName, op: Operation, path: string): Route {
  const segments = split(path);
  return { name, op, segments, paramCount: segments.filter((s) => s.startsWith('{')).length };
}

export class Router {
  private readonly routes: Route[];

  constructor(creditPath: string) {
    this.routes = (Object.entries(operations) as [OperationName, Operation][]).map(([name, op]) =>
      route(name, op, name === 'userCredit' ? creditPath : op.path),
    );
    this.routes.push(route('getOffer', operations.getOffer, OFFER_PATH_ALIAS));
  }

  match(method: string, pathname: string): Match {
    const raw = split(pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname);
    let segments: string[];
    try {
      segments = raw.map((s) => decodeURIComponent(s));
    } catch {
      throw notFound();
    }
    const candidates: { r: Route; params: Record<string, string> }[] = [];
    for (const r of this.routes) {
      const params = this.bind(r, segments);
      if (params) candidates.push({ r, params });
    }
    if (candidates.length === 0) throw notFound();
    const allowed = candidates.filter((c) => c.r.op.method === method).sort((a, b) => a.r.paramCount - b.r.paramCount);
    if (allowed.length === 0) {
      const methods = [...new Set(candidates.map((c) => c.r.op.method))].join(', ');
      throw new SandboxError(
        'method_not_allowed',
        405,
        `The ${method} method is not supported for route ${pathname.slice(1)}. Supported methods: ${methods}.`,
        undefined,
        { Allow: methods },
      );
    }
    const best = allowed[0];
    return { name: best.r.name, op: best.r.op, params: best.params };
  }

  private bind(r: Route, segments: string[]): Record<string, string> | undefined {
    if (r.segments.length !== segments.length) return undefined;
    const params: Record<string, string> = {};
    for (let i = 0; i < segments.length; i++) {
      const want = r.segments[i];
      if (want.startsWith('{')) {
        if (segments[i] === '') return undefined;
        params[want.slice(1, -1)] = segments[i];
      } else if (want !== segments[i]) return undefined;
    }
    return params;
  }
}
