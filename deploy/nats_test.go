package deploy

import (
	"fmt"
	"net"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// checkNATS: the StatefulSet has the overlay's node count, spread over
// nodes and guarded by a PodDisruptionBudget; its configuration, with the
// auth.conf `claimcheck creds server-config` writes, is accepted by
// nats-server itself (server.ProcessConfigFile: unknown fields fail) and
// says sync always, 1 MiB payloads, lame duck mode (which the preStop hook
// enters), encryption at rest, operator mode, and routes to exactly the
// overlay's nodes.
func checkNATS(o *objects, want expect, f *facts, p *problems) {
	if len(o.statefulSets) != 1 || o.statefulSets[0].Name != "nats" {
		p.addf("want one StatefulSet, nats")
		return
	}
	ss := &o.statefulSets[0]
	if ss.Spec.Replicas == nil || int(*ss.Spec.Replicas) != want.replicas {
		p.addf("StatefulSet nats: replicas %v, want %d", deref(ss.Spec.Replicas), want.replicas)
	}
	spec := &ss.Spec.Template.Spec
	if len(spec.Containers) != 1 {
		p.addf("StatefulSet nats: want one container")
		return
	}
	c := &spec.Containers[0]
	checkNATSPlacement(o, ss.Spec.Template.Labels, spec, p)
	conf := argValue(c.Args, "--config")
	if conf == "" && len(c.Args) > 1 && c.Args[0] == "-c" {
		conf = c.Args[1]
	}
	vol, _ := mountOf(spec, c, conf)
	if vol == nil || vol.Projected == nil {
		p.addf("StatefulSet nats: --config %q is not on a projected volume of the ConfigMap and the auth Secret", conf)
		return
	}
	dir := filepath.Join(f.scratch, fmt.Sprintf("nats-%d", len(*p)))
	if err := writeNATSConfig(o, vol.Projected, f, dir); err != nil {
		p.addf("StatefulSet nats: %w", err)
		return
	}
	env := map[string]string{}
	for _, e := range c.Env {
		switch {
		case e.Value != "":
			env[e.Name] = e.Value
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name":
			env[e.Name] = "nats-0"
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			env[e.Name] = "0123456789abcdef0123456789abcdef"
		}
	}
	for k, v := range env {
		f.setenv(k, v)
	}
	opts, err := server.ProcessConfigFile(filepath.Join(dir, path.Base(conf)))
	if err != nil {
		p.addf("nats.conf: nats-server refuses it: %w", err)
		return
	}
	if opts.AccountResolver != nil {
		defer opts.AccountResolver.Close()
	}
	checkNATSOptions(opts, ss, want, c, p)
	if ms := maxMsgSize(o); ms > int64(opts.MaxPayload) {
		p.addf("nats.conf: max_payload %d below claimcheck.yaml's streams.max_msg_size %d", opts.MaxPayload, ms)
	}
	checkHeadless(o, ss.Spec.ServiceName, ss.Spec.Template.Labels, p)
}

func checkNATSOptions(opts *server.Options, ss *appsv1.StatefulSet, want expect, c *corev1.Container, p *problems) {
	spec := &ss.Spec.Template.Spec
	if !opts.JetStream || !opts.SyncAlways {
		p.addf("nats.conf: want jetstream with sync_interval: always (JetStream %v, sync always %v)", opts.JetStream, opts.SyncAlways)
	}
	if opts.MaxPayload != 1<<20 {
		p.addf("nats.conf: max_payload %d, want 1 MiB", opts.MaxPayload)
	}
	if opts.JetStreamKey == "" || opts.JetStreamCipher != server.ChaCha {
		p.addf("nats.conf: want the store encrypted (cipher chachapoly, a key)")
	}
	if len(opts.TrustedOperators) != 1 || opts.SystemAccount == "" || opts.AccountResolver == nil {
		p.addf("nats.conf: want operator mode from auth.conf (operator, system_account, resolver)")
	}
	if opts.ServerName != "nats-0" {
		p.addf("nats.conf: server_name %q, want the pod's name (nats-0)", opts.ServerName)
	}
	if _, m := mountOf(spec, c, opts.StoreDir); m == nil ||
		!slices.ContainsFunc(ss.Spec.VolumeClaimTemplates, func(t corev1.PersistentVolumeClaim) bool { return t.Name == m.Name }) {
		p.addf("nats.conf: store_dir %s is not on a volume claim template's volume", opts.StoreDir)
	}
	grace := time.Duration(deref(spec.TerminationGracePeriodSeconds)) * time.Second
	if opts.LameDuckDuration <= 0 || opts.LameDuckDuration+opts.LameDuckGracePeriod >= grace {
		p.addf("nats.conf: lame_duck_duration %s + grace %s must be positive and below terminationGracePeriodSeconds (%s)",
			opts.LameDuckDuration, opts.LameDuckGracePeriod, grace)
	}
	pre := c.Lifecycle
	if pre == nil || pre.PreStop == nil || pre.PreStop.Exec == nil ||
		!strings.Contains(strings.Join(pre.PreStop.Exec.Command, " "), "--signal ldm="+opts.PidFile) {
		p.addf("StatefulSet nats: the preStop hook must put the server in lame duck mode (nats-server --signal ldm=%s)", opts.PidFile)
	}
	for what, port := range map[string]int{"client": opts.Port, "monitor": opts.HTTPPort} {
		if !slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool { return cp.Name == what && int(cp.ContainerPort) == port }) {
			p.addf("StatefulSet nats: container port %s is not nats.conf's %d", what, port)
		}
	}
	if want.replicas == 1 {
		if opts.Cluster.Port != 0 || len(opts.Routes) != 0 {
			p.addf("nats.conf: one node, yet a cluster with %d routes", len(opts.Routes))
		}
		return
	}
	if opts.Cluster.Name == "" || !slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool { return int(cp.ContainerPort) == opts.Cluster.Port }) {
		p.addf("nats.conf: cluster %q listens on %d, not a container port", opts.Cluster.Name, opts.Cluster.Port)
	}
	var routes, nodes []string
	for _, r := range opts.Routes {
		routes = append(routes, r.Host)
	}
	for i := range want.replicas {
		nodes = append(nodes, net.JoinHostPort(fmt.Sprintf("nats-%d.%s", i, ss.Spec.ServiceName), strconv.Itoa(opts.Cluster.Port)))
	}
	slices.Sort(routes)
	if !slices.Equal(routes, nodes) {
		p.addf("nats.conf: routes %v, want every node: %v", routes, nodes)
	}
}

// writeNATSConfig writes what the projected volume holds into dir: the
// ConfigMap's files and the auth.conf `claimcheck creds server-config`
// makes for a fresh authority.
func writeNATSConfig(o *objects, pv *corev1.ProjectedVolumeSource, f *facts, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	auth := false
	for _, src := range pv.Sources {
		switch {
		case src.ConfigMap != nil:
			cm := o.configMapByName(src.ConfigMap.Name)
			if cm == nil {
				return fmt.Errorf("projected ConfigMap %s does not exist", src.ConfigMap.Name)
			}
			for name, data := range cm.Data {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
					return err
				}
			}
		case src.Secret != nil && src.Secret.Name == "claimcheck-nats-auth":
			if len(src.Secret.Items) != 1 || src.Secret.Items[0].Key != "auth.conf" || src.Secret.Items[0].Path != "auth.conf" {
				return fmt.Errorf("the Secret claimcheck-nats-auth must project its key auth.conf as auth.conf")
			}
			b, err := f.authority.ServerConfig(filepath.Join(dir, "resolver"))
			if err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(dir, "auth.conf"), b, 0o600); err != nil {
				return err
			}
			auth = true
		}
	}
	if !auth {
		return fmt.Errorf("no auth.conf from the Secret claimcheck-nats-auth beside nats.conf")
	}
	return nil
}

func checkNATSPlacement(o *objects, podLabels map[string]string, spec *corev1.PodSpec, p *problems) {
	spread := false
	if a := spec.Affinity; a != nil && a.PodAntiAffinity != nil {
		for _, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			s, err := metavSelector(t.LabelSelector)
			if err == nil && t.TopologyKey == "kubernetes.io/hostname" && s.Matches(labels.Set(podLabels)) {
				spread = true
			}
		}
	}
	if !spread {
		p.addf("StatefulSet nats: want a required podAntiAffinity on kubernetes.io/hostname against its own pods")
	}
	guarded := false
	for _, pdb := range o.pdbs {
		s, err := metavSelector(pdb.Spec.Selector)
		if err == nil && s.Matches(labels.Set(podLabels)) && pdb.Spec.MaxUnavailable != nil && pdb.Spec.MaxUnavailable.IntValue() == 1 {
			guarded = true
		}
	}
	if !guarded {
		p.addf("StatefulSet nats: want a PodDisruptionBudget with maxUnavailable 1 for its pods")
	}
}

// checkHeadless: the routes' Service resolves every node, ready or not.
func checkHeadless(o *objects, name string, podLabels map[string]string, p *problems) {
	for _, s := range o.services {
		if s.Name != name {
			continue
		}
		if s.Spec.ClusterIP != corev1.ClusterIPNone || !s.Spec.PublishNotReadyAddresses ||
			!labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(podLabels)) {
			p.addf("Service %s: want headless (clusterIP None), publishNotReadyAddresses, selecting the NATS pods", name)
		}
		return
	}
	p.addf("StatefulSet nats: no Service %s (its serviceName)", name)
}

func deref[T any](v *T) T {
	var zero T
	if v == nil {
		return zero
	}
	return *v
}
