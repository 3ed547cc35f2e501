package deploy

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/claimcheck/claimcheck/pkg/identity"
	"github.com/claimcheck/claimcheck/pkg/telemetry"
)

// facts are what the manifests must agree with, read from the rest of the
// repository once per test.
type facts struct {
	natsVersion string                     // pkg/go.mod's nats-server
	serviceKeys map[string]map[string]bool // each service's configuration keys
	consumer    string                     // the verifiers' durable consumer on CLAIMS
	authority   *identity.Authority        // makes the auth.conf NATS includes
	deployDoc   string                     // docs/deploy.md
	scratch     string                     // a directory the checks write into
	setenv      func(key, value string)
}

func loadFacts(t *testing.T) *facts {
	t.Helper()
	f := &facts{serviceKeys: map[string]map[string]bool{}, scratch: t.TempDir(), setenv: t.Setenv}
	var err error
	if f.natsVersion, err = natsServerVersion(); err != nil {
		t.Fatal(err)
	}
	for _, svc := range services {
		if f.serviceKeys[svc], err = serviceConfigKeys(svc); err != nil {
			t.Fatal(err)
		}
	}
	if f.consumer, err = stringConst(filepath.Join(repo, "services", "verifier", "verifier.go"), "ConsumerName"); err != nil {
		t.Fatal(err)
	}
	if f.authority, _, err = identity.Open(filepath.Join(t.TempDir(), "auth")); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(repo, "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	f.deployDoc = string(doc)
	return f
}

// overlays are the builds a deployment may apply.
var overlays = []struct {
	dir  string
	want expect
}{
	{"k8s/overlays/dev", expect{replicas: 1}},
	{"k8s/overlays/prod", expect{replicas: 3}},
	{"testdata/prod-keda-prometheus", expect{replicas: 3, keda: true, prometheus: true}},
	// A witness, on another operator's cluster, and prod asking it.
	{"k8s/witness", expect{witness: true}},
	{"testdata/prod-witness", expect{replicas: 3, witnesses: 1}},
}

// TestOverlays builds every overlay with kustomize's API (what `kustomize
// build` and `kubectl apply -k` run), decodes every object strictly into
// the Kubernetes API types, and checks the invariants docs/deploy.md
// states (see check).
func TestOverlays(t *testing.T) {
	f := loadFacts(t)
	for _, o := range overlays {
		t.Run(filepath.Base(o.dir), func(t *testing.T) {
			objs, err := build(o.dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := check(objs, o.want, f); err != nil {
				t.Errorf("%s:\n%v", o.dir, err)
			}
		})
	}
}

// TestBrokenOverlaysFail: a copy of the manifests with one mistake fails
// the checks, naming it; so TestOverlays can fail.
func TestBrokenOverlaysFail(t *testing.T) {
	f := loadFacts(t)
	t.Run("an unchanged copy passes", func(t *testing.T) {
		root := copyTree(t)
		for _, o := range overlays {
			objs, err := build(filepath.Join(root, o.dir))
			if err == nil {
				err = check(objs, o.want, f)
			}
			if err != nil {
				t.Errorf("%s: %v", o.dir, err)
			}
		}
	})
	for _, tc := range []struct {
		name, file, old, new string // no old: drop the YAML block under the key new
		overlay              int    // index into overlays
		want                 string
	}{
		{"unknown field", "k8s/base/ingest.yaml", "terminationGracePeriodSeconds:", "terminationGracePeriodSecond:", 1, `unknown field "spec.template.spec.terminationGracePeriodSecond"`},
		{"unknown field in a CRD", "k8s/components/keda/scaledobject.yaml", "cooldownPeriod:", "coolDownPeriod:", 2, `unknown field "spec.coolDownPeriod"`},
		{"no readiness probe", "k8s/base/verifier.yaml", "", "readinessProbe:", 1, "container verifier readinessProbe: missing"},
		{"probe on an undeclared port", "k8s/base/gatekeeper.yaml", "port: http\n            periodSeconds: 10", "port: 9091\n            periodSeconds: 10", 0, "livenessProbe: port 9091 is not a port"},
		{"no limits", "k8s/base/rotator.yaml", "            limits:\n              cpu: \"1\"\n              memory: 1Gi\n", "", 0, "container rotator: needs cpu requests and limits"},
		{"root filesystem writable", "k8s/base/nats.yaml", "readOnlyRootFilesystem: true", "readOnlyRootFilesystem: false", 0, "container nats: readOnlyRootFilesystem must be true"},
		{"selector mismatch", "k8s/base/ingest.yaml", "    matchLabels:\n      app.kubernetes.io/name: ingest", "    matchLabels:\n      app.kubernetes.io/name: ingester", 0, "Deployment ingest: selector"},
		{"image tag latest", "k8s/overlays/prod/kustomization.yaml", "claimcheck/verifier\n    newTag: 0.0.0-dev", "claimcheck/verifier\n    newTag: latest", 1, "needs a pinned tag"},
		{"nats version", "k8s/base/nats.yaml", "nats:2.15.2-alpine", "nats:2.14.0-alpine", 0, "want nats:"},
		{"streams replicas", "k8s/overlays/prod/kustomization.yaml", "CLAIMCHECK_STREAMS_REPLICAS=3", "CLAIMCHECK_STREAMS_REPLICAS=1", 1, "streams.replicas 1, want 3"},
		{"nats nodes", "k8s/overlays/prod/kustomization.yaml", "count: 3", "count: 5", 1, "replicas 5, want 3"},
		{"a route missing", "k8s/overlays/prod/cluster.conf", "    nats-route://nats-2.nats-headless:6222\n", "", 1, "want every node"},
		{"sync interval", "k8s/base/config/nats.conf", "sync_interval: always", "sync_interval: 2m", 0, "sync_interval: always"},
		{"nats config typo", "k8s/base/config/nats.conf", "lame_duck_duration:", "lame_duck_durations:", 0, "nats-server refuses it"},
		{"two rotators", "k8s/base/rotator.yaml", "type: Recreate", "type: RollingUpdate", 0, "Deployment rotator: want replicas 1 and strategy Recreate"},
		{"unknown top-level key", "k8s/base/config/claimcheck.yaml", "log:\n", "tracing: true\nlog:\n", 0, `unknown key "tracing"`},
		{"unknown service key", "k8s/base/config/claimcheck.yaml", "takeover: false", "take_over: false", 0, "unknown key ingest.take_over"},
		{"bad streams value", "k8s/base/config/claimcheck.yaml", "partitions: 4", "partitions: 100", 0, "streams.partitions 100"},
		{"wrong credentials", "k8s/base/gatekeeper.yaml", "secretName: claimcheck-gatekeeper-creds", "secretName: claimcheck-verifier-creds", 0, "Secret claimcheck-gatekeeper-creds"},
		{"route port open", "k8s/base/networkpolicy.yaml", "        - port: 4222\n", "        - port: 6222\n", 0, "route port 6222 is open"},
		{"two autoscalers", "k8s/components/keda/kustomization.yaml", "", "patches:", 2, "Deployment verifier: 2 autoscalers"},
		{"a kustomization typo", "k8s/components/keda/kustomization.yaml", "patches:", "patchez:", 2, "kustomize build"},
		{"missing volume", "k8s/base/verifier.yaml", "        - name: keys\n          persistentVolumeClaim:", "        - name: key\n          persistentVolumeClaim:", 0, `mounts volume "keys"`},
		{"witness: no readiness probe", "k8s/witness/witness.yaml", "", "readinessProbe:", 3, "container witness readinessProbe: missing"},
		{"witness: readiness on /readyz", "k8s/witness/witness.yaml", "path: /healthz\n              port: http\n            periodSeconds: 5", "path: /readyz\n              port: http\n            periodSeconds: 5", 3, "the witness serves no /readyz"},
		{"witness: image tag latest", "k8s/witness/kustomization.yaml", "newTag: 0.0.0-dev", "newTag: latest", 3, "needs a pinned tag"},
		{"witness: no limits", "k8s/witness/witness.yaml", "            limits:\n              cpu: 500m\n              memory: 256Mi\n", "", 3, "container witness: needs cpu requests and limits"},
		{"witness: capabilities kept", "k8s/witness/witness.yaml", "          securityContext:\n            allowPrivilegeEscalation: false\n            readOnlyRootFilesystem: true\n            capabilities:\n              drop: [\"ALL\"]\n          volumeMounts:\n            - name: state\n              mountPath: /var/lib/witness\n            - name: logs", "          securityContext:\n            allowPrivilegeEscalation: false\n            readOnlyRootFilesystem: true\n          volumeMounts:\n            - name: state\n              mountPath: /var/lib/witness\n            - name: logs", 3, "container witness: capabilities must drop ALL"},
		{"witness: token mounted", "k8s/witness/witness.yaml", "automountServiceAccountToken: false", "automountServiceAccountToken: true", 3, "automountServiceAccountToken must be false"},
		{"witness: state not on its claim", "k8s/witness/witness.yaml", "- --dir=/var/lib/witness\n            - --name=witness.example.net/w1\n            - --listen", "- --dir=/tmp/witness\n            - --name=witness.example.net/w1\n            - --listen", 3, `container witness: --dir "/tmp/witness" is not on a volumeClaimTemplate`},
		{"witness: two replicas", "k8s/witness/witness.yaml", "replicas: 1", "replicas: 2", 3, "replicas 2, want 1"},
		{"witness: key made under another name", "k8s/witness/witness.yaml", "- --name=witness.example.net/w1\n          resources", "- --name=witness.example.net/w2\n          resources", 3, "want the same --dir and --name"},
		{"witness: another port open", "k8s/witness/networkpolicy.yaml", "- port: 7380", "- port: 7381", 3, "opens port 7381 of the witness"},
		{"witness: no default deny", "k8s/witness/networkpolicy.yaml", "  podSelector: {}\n", "  podSelector:\n    matchLabels:\n      app.kubernetes.io/name: witness\n", 3, "want a default deny of ingress"},
		{"witness: clients' addresses lost", "k8s/witness/witness.yaml", "  externalTrafficPolicy: Local\n", "  externalTrafficPolicy: Cluster\n", 3, "want Local"},
		{"witness: a logs line malformed", "k8s/witness/logs", "# below,", "log claimcheck.ledger/01J below,", 3, `want "log <origin> <key>"`},
		{"witness: a log key not the origin's", "k8s/witness/logs", "# below,", "log claimcheck.ledger/01J witness.example.net/w1+d2ac7080+BNGN2/Nv7HZv72I5LG9WK2/mQjrnJmhuDsKmib9TLqii\n# below,", 3, "the witness refuses"},
		{"rotator: a placeholder witness key", "testdata/prod-witness/claimcheck.yaml", "key: witness.example.net/w1+d2ac7080+BNGN2/Nv7HZv72I5LG9WK2/mQjrnJmhuDsKmib9TLqii", "key: REPLACE-ME", 4, "rotator.witnesses[0]: key"},
		{"rotator: no witness", "testdata/prod-witness/kustomization.yaml", "", "configMapGenerator:", 4, "0 rotator.witnesses, want 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyTree(t)
			file := filepath.Join(root, tc.file)
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var edited string
			if tc.old == "" {
				edited = dropBlock(string(raw), tc.new)
			} else {
				edited = strings.Replace(string(raw), tc.old, tc.new, 1)
			}
			if edited == string(raw) {
				t.Fatalf("%s: the edit changed nothing", tc.file)
			}
			if err := os.WriteFile(file, []byte(edited), 0o600); err != nil {
				t.Fatal(err)
			}
			o := overlays[tc.overlay]
			objs, err := build(filepath.Join(root, o.dir))
			if err == nil {
				err = check(objs, o.want, f)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want an error containing %q, got: %v", tc.want, err)
			}
		})
	}
}

// copyTree copies the manifests and the test's overlays into a new
// directory, keeping their relative paths.
func copyTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, dir := range []string{"k8s", "testdata"} {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			dst := filepath.Join(root, path)
			if d.IsDir() {
				return os.MkdirAll(dst, 0o700)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(dst, b, 0o600)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// dropBlock removes the first line holding key and the lines indented
// below it.
func dropBlock(s, key string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != key {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " "))
		j := i + 1
		for j < len(lines) && (strings.TrimSpace(lines[j]) == "" || len(lines[j])-len(strings.TrimLeft(lines[j], " ")) > indent) {
			j++
		}
		return strings.Join(slices.Concat(lines[:i], lines[j:]), "")
	}
	return s
}

var metricName = regexp.MustCompile(`\b(claimcheck|process|go)_[a-z0-9_]+\b`)

// TestGrafanaDashboardUsesExportedMetrics: every series the dashboard
// queries is one the services export: claimcheck_* as registered in
// services/*/ through pkg/telemetry, process_* and go_* as pkg/telemetry's
// registry gathers them.
func TestGrafanaDashboardUsesExportedMetrics(t *testing.T) {
	exported, err := exportedMetrics()
	if err != nil {
		t.Fatal(err)
	}
	if len(exported) < 30 {
		t.Fatalf("found only %d metric names in services/: the source scan is broken", len(exported))
	}
	mfs, err := telemetry.NewRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		exported[mf.GetName()] = true
	}
	raw, err := os.ReadFile("k8s/grafana/claimcheck.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	queries := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			queries++
			names := metricName.FindAllString(tg.Expr, -1)
			if len(names) == 0 {
				t.Errorf("panel %q: %s queries no claimcheck metric", p.Title, tg.Expr)
			}
			for _, n := range names {
				if !exported[n] {
					t.Errorf("panel %q: %s is not exported by any service", p.Title, n)
				}
			}
		}
	}
	if queries == 0 {
		t.Error("the dashboard has no queries")
	}
}
