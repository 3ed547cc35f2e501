#!/usr/bin/env bash
# Checks the workspace's shape:
#  1. every module builds and vets on its own (GOWORK=off, using its replace lines);
#  2. dependencies point one way: schemas ← pkg ← services, cmd; services never
#     import each other; only cmd/claimcheck and bench may import services;
#  3. e2e is black-box: it drives the built binaries, imports only schemas and
#     pkg, and holds nothing but tests (each package's one other file is its doc);
#  4. claimcheck-hook stays lean: it imports neither nats-server nor nats.go nor
#     any configuration, schema or secret-scanning library, and its lean build
#     (-tags oneshot_notls) links neither crypto/tls nor crypto/x509.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/modules.sh
fail=0
# -o /dev/null: a module whose ./... is a single main package (bench) would
# otherwise leave its binary in the module directory.
for m in "${MODULES[@]}"; do
  if ! (cd "$m" && GOWORK=off go build -o /dev/null ./... && GOWORK=off go vet ./...) ; then
    echo "FAIL: module $m does not build on its own (GOWORK=off)"; fail=1
  fi
done
deps() { (cd "$1" && go list -deps -test ./... 2>/dev/null | sed -E "s/ \[.*\]\$//; s/(\.test|_test)\$//" | grep "^$MODULE_PREFIX/" | sort -u); }
allowed() { # module importer → allowed prefixes of imported claimcheck modules
  case "$1" in
    schemas) echo "schemas" ;;
    pkg) echo "schemas pkg" ;;
    services/*) echo "schemas pkg $1" ;;
    cmd/claimcheck-hook) echo "schemas pkg cmd/claimcheck-hook" ;;
    cmd/claimcheck) echo "schemas pkg services cmd/claimcheck" ;;
    e2e) echo "schemas pkg e2e" ;;
    bench) echo "schemas pkg services cmd bench" ;;
    deploy) echo "schemas pkg deploy" ;;
  esac
}
for m in "${MODULES[@]}"; do
  ok=$(allowed "$m")
  while read -r p; do
    [ -z "$p" ] && continue
    rel=${p#"$MODULE_PREFIX/"}
    good=0
    for a in $ok; do
      case "$rel" in "$a"|"$a"/*) good=1 ;; esac
    done
    if [ $good = 0 ]; then echo "FAIL: $m imports $rel (allowed: $ok)"; fail=1; fi
  done < <(deps "$m")
done
code=$(cd e2e && go list -f '{{.ImportPath}}: {{join .GoFiles " "}}' ./... | grep -vxE "$MODULE_PREFIX/e2e(/[a-z0-9_/]+)?: doc.go" || true)
if [ -n "$code" ]; then echo "FAIL: e2e holds code besides its tests (move it to pkg or bench):"; echo "$code"; fail=1; fi
heavy=$(cd cmd/claimcheck-hook && go list -deps . | grep -E 'nats-io/nats-server|nats-io/nats.go|spf13/(viper|cobra)|santhosh-tekuri|zricethezav|prometheus' || true)
if [ -n "$heavy" ]; then echo "FAIL: claimcheck-hook imports heavy packages:"; echo "$heavy"; fail=1; fi
# The lean build (make build's claimcheck-hook) leaves TLS and X.509 out: their
# package initialisation is ~1 ms of every hook run on a slow machine.
lean=$(cd cmd/claimcheck-hook && go list -tags oneshot_notls -deps . | grep -E '^crypto/(tls|x509)$' || true)
if [ -n "$lean" ]; then echo "FAIL: the lean claimcheck-hook (-tags oneshot_notls) links:"; echo "$lean"; fail=1; fi
[ $fail = 0 ] && echo "modules: ok (${#MODULES[@]} modules build alone; dependencies point one way; e2e is black-box; hook is lean)"
exit $fail
