#!/usr/bin/env bash
# The workspace's modules, in dependency order (each depends only on earlier ones).
# The module path prefix is named here once; every go.mod uses it.
MODULE_PREFIX=github.com/claimcheck/claimcheck
MODULES=(schemas pkg services/ingest services/verifier services/gatekeeper services/rotator cmd/claimcheck-hook cmd/claimcheck e2e bench deploy)
