// The Go tools `npm start` and `npm test` run, pinned, built from the Go module proxy into
// .tools/bin by scripts/bootstrap.mjs; scripts/images.mjs tags its images with these versions.
import { TEMPORAL_SERVER_PATCH } from './temporal-patch.mjs';

export const TOOLS = {
  // Built with TEMPORAL_SERVER_PATCH (scripts/temporal-patch.mjs), not by a plain `go install`.
  temporal: {
    module: 'github.com/temporalio/cli/cmd/temporal', version: 'v1.5.1',
    patched: { mainModule: 'github.com/temporalio/cli', versionFlag: 'github.com/temporalio/cli/temporalcli.Version', patch: TEMPORAL_SERVER_PATCH },
  },
  'nats-server': { module: 'github.com/nats-io/nats-server/v2', version: 'v2.15.2' },
};
