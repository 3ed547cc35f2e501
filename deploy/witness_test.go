package deploy

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/claimcheck/claimcheck/pkg/keyring"
	"github.com/claimcheck/claimcheck/pkg/transparency"
)

// checkWitness runs the invariants of a witness's build (deploy/k8s/witness,
// docs/deploy.md "A witness on another operator's cluster"): the generic
// ones every workload meets (namespace, probes, limits, security, Services,
// pinned images) and the witness's own (checkWitnessServer,
// checkWitnessNetwork).
func checkWitness(o *objects, f *facts) error {
	var p problems
	checkNamespaces(o, witnessNamespace, &p)
	checkWorkloads(o, &p)
	checkServices(o, &p)
	checkImages(o, f, &p)
	port := checkWitnessServer(o, f, &p)
	checkWitnessNetwork(o, port, &p)
	return p.err()
}

// checkWitnessServer: the build runs one witness, a one-replica StatefulSet
// (nothing else: no Deployment, no Job) whose container runs
// claimcheck/claimcheck `witness serve` with --dir on its own
// volumeClaimTemplate (writable), --listen on the port it declares (its
// /healthz the readiness probe: the witness serves no /readyz), --logs from
// a ConfigMap mounted read-only, every line of it a log claimcheck's own
// witness code accepts, and --name a key name it accepts; an init
// container running `witness key` (printing its key) uses the same --dir
// and --name. It returns the port the witness listens on.
func checkWitnessServer(o *objects, f *facts, p *problems) int32 {
	if len(o.deployments)+len(o.jobs) != 0 {
		p.addf("a witness build runs a StatefulSet alone: found %d Deployments and %d Jobs", len(o.deployments), len(o.jobs))
	}
	if len(o.statefulSets) != 1 {
		p.addf("want one StatefulSet (the witness), found %d", len(o.statefulSets))
		return 0
	}
	s := &o.statefulSets[0]
	if s.Spec.Replicas != nil && *s.Spec.Replicas != 1 {
		p.addf("StatefulSet %s: replicas %d, want 1 (each pod would keep a key and a history of its own behind one Service)", s.Name, *s.Spec.Replicas)
	}
	w := podTemplate{kind: "StatefulSet", name: s.Name, tpl: &s.Spec.Template, claims: s.Spec.VolumeClaimTemplates}
	spec := &w.tpl.Spec
	var serve *corev1.Container
	for i := range spec.Containers {
		if slices.Equal(positional(spec.Containers[i].Args), []string{"witness", "serve"}) {
			if serve != nil {
				p.addf("%s: two containers run `witness serve`", w)
			}
			serve = &spec.Containers[i]
		}
	}
	if serve == nil {
		p.addf("%s: no container runs `claimcheck witness serve`", w)
		return 0
	}
	where := fmt.Sprintf("%s container %s", w, serve.Name)
	if name, _, ok := claimcheckImage(serve.Image); !ok || name != "claimcheck" {
		p.addf("%s: image %s, want claimcheck/claimcheck (the CLI)", where, serve.Image)
	}
	dir, keyName := argValue(serve.Args, "--dir"), argValue(serve.Args, "--name")
	checkOnClaim(p, where, w, serve, dir)
	if keyName == "" {
		p.addf("%s: no --name: the key would be named after the pod (claimcheck.witness/witness-0)", where)
	}

	// --listen, the declared port, the probes.
	var port int32
	if _, ps, err := net.SplitHostPort(argValue(serve.Args, "--listen")); err != nil {
		p.addf("%s: --listen %q: %w", where, argValue(serve.Args, "--listen"), err)
	} else if n, err := strconv.Atoi(ps); err == nil && slices.ContainsFunc(serve.Ports, func(cp corev1.ContainerPort) bool { return int(cp.ContainerPort) == n }) {
		port = int32(n)
	} else {
		p.addf("%s: --listen port %s is not a port the container declares", where, ps)
	}
	for _, pr := range []struct {
		what  string
		probe *corev1.Probe
	}{{"livenessProbe", serve.LivenessProbe}, {"readinessProbe", serve.ReadinessProbe}} {
		what, pr := pr.what, pr.probe
		if pr != nil && pr.HTTPGet != nil && (pr.HTTPGet.Path != "/healthz" || containerPort(serve.Ports, pr.HTTPGet.Port) != port) {
			p.addf("%s %s: %s on port %s, want /healthz on the --listen port (the witness serves no /readyz)",
				where, what, pr.HTTPGet.Path, pr.HTTPGet.Port.String())
		}
	}

	// --logs: a ConfigMap's file, read-only, lines the witness accepts.
	logs := map[string][]string{}
	file := argValue(serve.Args, "--logs")
	vol, mnt := mountOf(spec, serve, file)
	switch {
	case file == "" || vol == nil || vol.ConfigMap == nil || !mnt.ReadOnly:
		p.addf("%s: --logs %q must be a file of a ConfigMap, mounted read-only", where, file)
	case o.configMapByName(vol.ConfigMap.Name) == nil:
		p.addf("%s: --logs %s: no ConfigMap %s", where, file, vol.ConfigMap.Name)
	default:
		rel := strings.TrimPrefix(file, strings.TrimSuffix(mnt.MountPath, "/")+"/")
		for _, it := range vol.ConfigMap.Items {
			if it.Path == rel {
				rel = it.Key
			}
		}
		raw, ok := o.configMapByName(vol.ConfigMap.Name).Data[rel]
		if !ok {
			p.addf("%s: --logs %s: ConfigMap %s has no key %s", where, file, vol.ConfigMap.Name, rel)
		}
		if err := transparency.ParseLogs(strings.NewReader(raw), logs); err != nil {
			p.addf("ConfigMap %s %s: %w", vol.ConfigMap.Name, rel, err)
		}
	}
	// claimcheck's witness code makes a key named --name and takes the logs
	// (OpenWitness is what `witness serve` runs, after reading --logs).
	if keyName != "" {
		if d, err := os.MkdirTemp(f.scratch, "witness"); err != nil {
			p.addf("%w", err)
		} else if _, err := transparency.OpenWitness(d, keyName, logs, slog.New(slog.DiscardHandler)); err != nil {
			p.addf("%s: the witness refuses its --name %q or --logs: %w", where, keyName, err)
		}
	}

	// `witness key` in an init container: the same key.
	for i := range spec.InitContainers {
		c := &spec.InitContainers[i]
		if !slices.Equal(positional(c.Args), []string{"witness", "key"}) {
			continue
		}
		iw := fmt.Sprintf("%s init container %s", w, c.Name)
		if argValue(c.Args, "--dir") != dir || argValue(c.Args, "--name") != keyName {
			p.addf("%s: --dir %q --name %q, want the same --dir and --name as %s (%q, %q)",
				iw, argValue(c.Args, "--dir"), argValue(c.Args, "--name"), serve.Name, dir, keyName)
		}
		checkOnClaim(p, iw, w, c, argValue(c.Args, "--dir"))
	}
	return port
}

// checkOnClaim: dir is on one of the StatefulSet's volumeClaimTemplates,
// mounted writable, which asks for storage.
func checkOnClaim(p *problems, where string, w podTemplate, c *corev1.Container, dir string) {
	_, mnt := mountOf(&w.tpl.Spec, c, dir)
	var claim *corev1.PersistentVolumeClaim
	for i := range w.claims {
		if mnt != nil && w.claims[i].Name == mnt.Name {
			claim = &w.claims[i]
		}
	}
	if dir == "" || claim == nil || mnt.ReadOnly || slices.ContainsFunc(w.tpl.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == mnt.Name }) {
		p.addf("%s: --dir %q is not on a volumeClaimTemplate, mounted writable (the key and state must outlive the pod)", where, dir)
		return
	}
	if _, ok := claim.Spec.Resources.Requests[corev1.ResourceStorage]; !ok || len(claim.Spec.AccessModes) == 0 {
		p.addf("%s: volumeClaimTemplate %s: wants access modes and a storage request", where, claim.Name)
	}
}

// checkWitnessNetwork: ingress is denied by default; the policies that
// select the witness open its --listen port and nothing else, to named
// peers (no rule lets everyone in, no namespaceSelector selects every
// namespace), and some policy opens it. A LoadBalancer or NodePort Service
// of the witness keeps its clients' addresses (externalTrafficPolicy
// Local): an ipBlock peer would not match them otherwise.
func checkWitnessNetwork(o *objects, port int32, p *problems) {
	checkDefaultDeny(o, p)
	if len(o.statefulSets) != 1 || port == 0 {
		return
	}
	pods := labels.Set(o.statefulSets[0].Spec.Template.Labels)
	open, byIP := false, false
	for _, np := range o.networkPolicies {
		sel, err := metavSelector(&np.Spec.PodSelector)
		if err != nil {
			p.addf("NetworkPolicy %s: %w", np.Name, err)
			continue
		}
		if !sel.Matches(pods) {
			continue
		}
		for _, r := range np.Spec.Ingress {
			if len(r.From) == 0 {
				p.addf("NetworkPolicy %s: a rule with no from lets everyone in", np.Name)
			}
			if len(r.Ports) == 0 {
				p.addf("NetworkPolicy %s: a rule with no ports opens every port of the witness", np.Name)
			}
			for _, pp := range r.Ports {
				if pp.Port == nil || pp.Port.IntValue() != int(port) || pp.EndPort != nil {
					p.addf("NetworkPolicy %s: opens port %s of the witness, want %d alone", np.Name, portString(pp), port)
				} else {
					open = true
				}
			}
			for _, peer := range r.From {
				if peer.NamespaceSelector != nil && len(peer.NamespaceSelector.MatchLabels)+len(peer.NamespaceSelector.MatchExpressions) == 0 {
					p.addf("NetworkPolicy %s: a namespaceSelector that selects every namespace", np.Name)
				}
				byIP = byIP || peer.IPBlock != nil
			}
		}
	}
	if !open {
		p.addf("NetworkPolicy: none opens the witness's port %d: the log's rotator cannot reach it", port)
	}
	for _, s := range o.services {
		external := s.Spec.Type == corev1.ServiceTypeLoadBalancer || s.Spec.Type == corev1.ServiceTypeNodePort
		if external && byIP && labels.SelectorFromSet(s.Spec.Selector).Matches(pods) && s.Spec.ExternalTrafficPolicy != corev1.ServiceExternalTrafficPolicyLocal {
			p.addf("Service %s: %s with externalTrafficPolicy %q hides the clients' addresses the NetworkPolicy admits by ipBlock; want Local",
				s.Name, s.Spec.Type, s.Spec.ExternalTrafficPolicy)
		}
	}
}

func portString(pp networkingv1.NetworkPolicyPort) string {
	if pp.Port == nil {
		return "(all)"
	}
	if pp.EndPort != nil {
		return pp.Port.String() + "-" + strconv.Itoa(int(*pp.EndPort))
	}
	return pp.Port.String()
}

// checkRotatorWitnesses: rotator.witnesses holds the build's witnesses,
// each as the rotator's Config.Validate accepts it: an http:// or https://
// URL and a cosignature/v1 verifier key transparency.NewWitnessClient
// takes (services/rotator, which this module may not import).
func checkRotatorWitnesses(o *objects, want expect, p *problems) {
	m, _, err := sharedConfig(o)
	if err != nil {
		return // checkConfig says why
	}
	rot, _ := m["rotator"].(map[string]any)
	ws, _ := rot["witnesses"].([]any)
	if len(ws) != want.witnesses {
		p.addf("claimcheck.yaml: %d rotator.witnesses, want %d", len(ws), want.witnesses)
	}
	for i, w := range ws {
		e, _ := w.(map[string]any)
		u, _ := e["url"].(string)
		k, _ := e["key"].(string)
		if _, err := transparency.NewWitnessClient(u, k); err != nil {
			p.addf("claimcheck.yaml: rotator.witnesses[%d]: key %q: the rotator refuses it: %w", i, k, err)
		}
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			p.addf("claimcheck.yaml: rotator.witnesses[%d]: url %q: want http:// or https://", i, u)
		}
	}
}

// TestWitnessOverlayConfigIsTheBase: the example overlay's claimcheck.yaml
// (testdata/prod-witness) is the base's with rotator.witnesses added,
// nothing else changed; so what TestOverlays checks of it is what the base
// deploys, plus the witnesses.
func TestWitnessOverlayConfigIsTheBase(t *testing.T) {
	read := func(file string) map[string]any {
		raw, err := os.ReadFile(filepath.FromSlash(file))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(raw, &m); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		return m
	}
	base := read("k8s/base/config/claimcheck.yaml")
	over := read(path.Join("testdata", "prod-witness", "claimcheck.yaml"))
	rot, _ := over["rotator"].(map[string]any)
	if _, ok := rot["witnesses"]; !ok {
		t.Fatal("testdata/prod-witness/claimcheck.yaml: no rotator.witnesses")
	}
	delete(rot, "witnesses")
	if !reflect.DeepEqual(base, over) {
		t.Errorf("testdata/prod-witness/claimcheck.yaml differs from k8s/base/config/claimcheck.yaml in more than rotator.witnesses:\nbase %v\noverlay %v", base, over)
	}
}

// TestWitnessTakesTheLogsKeys: the witness's build with its logs file
// filled in as docs/deploy.md says (the output of `claimcheck ledger
// checkpoint --keys`: here the note verifier keys of two registry keys, one
// of each algorithm, as the rotator's overlap has them) passes the checks,
// so the placeholder's checks do not pass only because it is empty.
func TestWitnessTakesTheLogsKeys(t *testing.T) {
	f := loadFacts(t)
	const origin = "claimcheck.ledger/01JDQ6Z8N4V3M1K2H5G7F9E0C8"
	dir := keyring.Dir{Path: t.TempDir()}
	var lines []string
	for i, alg := range []string{keyring.ECDSA, keyring.Ed25519} {
		k, err := dir.Generate("v"+strconv.Itoa(i+1), alg, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		vkey, err := transparency.VerifierKey(origin, k)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, "log "+origin+" "+vkey+"\n")
	}
	root := copyTree(t)
	file := filepath.Join(root, "k8s", "witness", "logs")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(string(raw)+strings.Join(lines, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	objs, err := build(filepath.Join(root, "k8s", "witness"))
	if err != nil {
		t.Fatal(err)
	}
	if err := check(objs, expect{witness: true}, f); err != nil {
		t.Error(err)
	}
	cm := objs.configMapByName(objs.statefulSets[0].Spec.Template.Spec.Volumes[0].ConfigMap.Name)
	if cm == nil || strings.Count(cm.Data["logs"], "\nlog ") != 2 {
		t.Errorf("the built ConfigMap does not hold the two log lines: %v", cm)
	}
}
