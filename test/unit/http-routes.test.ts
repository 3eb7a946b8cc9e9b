// gateways/http/routes.ts: what the routing table says about a path (405 + Allow, /metrics route label).
import express from 'express';
import { routePattern } from '../../gateways/http/routes';

function appWithMountedRouter(): express.Express {
  const app = express();
  const router = express.Router({ mergeParams: true });
  router.get('/stream/contacts/:userId', (_req, res) => { res.end(); });
  app.use('/ingest/v1/project/:project/datasource/:datasource', router);
  app.get('/sms/:id', (_req, res) => { res.end(); });
  return app;
}

describe('route patterns (the bounded /metrics route label)', () => {
  test('a route inside a router mounted on a pattern is labelled with the mount pattern, not the ids of the path', () => {
    const app = appWithMountedRouter();
    expect(routePattern(app, 'GET', '/ingest/v1/project/p-123/datasource/ds-9/stream/contacts/u-1')).toBe('/ingest/v1/project/:project/datasource/:datasource/stream/contacts/:userId');
    expect(routePattern(app, 'GET', '/ingest/v1/project/p-456/datasource/ds-7/stream/contacts/u-2')).toBe('/ingest/v1/project/:project/datasource/:datasource/stream/contacts/:userId');
  });

  test('a route on the app itself keeps its own pattern', () => {
    expect(routePattern(appWithMountedRouter(), 'GET', '/sms/abc')).toBe('/sms/:id');
  });
});
