package deploy

import (
	"slices"
	"strconv"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/claimcheck/claimcheck/pkg/stream"
)

// natsClientLabel marks the pods that may reach NATS's client port.
const natsClientLabel = "claimcheck.dev/nats-client"

// checkStreamsReplicas: every claimcheck container (the services and the
// streams Job) runs with streams.replicas equal to the NATS node count:
// CLAIMCHECK_STREAMS_REPLICAS from its environment (env, then envFrom), else
// claimcheck.yaml, else 1. The Job runs `streams ensure`.
func checkStreamsReplicas(o *objects, want expect, p *problems) {
	fileReplicas := "1"
	if m, _, err := sharedConfig(o); err == nil {
		if s, ok := m["streams"].(map[string]any); ok {
			if v, ok := s["replicas"].(float64); ok {
				fileReplicas = strconv.Itoa(int(v))
			}
		}
	}
	ensure := 0
	for _, w := range o.podTemplates() {
		for _, c := range w.tpl.Spec.Containers {
			if _, _, ok := claimcheckImage(c.Image); !ok {
				continue
			}
			got := fileReplicas
			if v, ok := o.envValue(&c, "CLAIMCHECK_STREAMS_REPLICAS"); ok {
				got = v
			}
			if got != strconv.Itoa(want.replicas) {
				p.addf("%s container %s: streams.replicas %s, want %d (the NATS nodes)", w, c.Name, got, want.replicas)
			}
			if w.kind == "Job" && slices.Equal(positional(c.Args), []string{"streams", "ensure"}) {
				ensure++
			}
		}
	}
	if ensure != 1 {
		p.addf("want one Job running `claimcheck streams ensure`, found %d", ensure)
	}
}

// positional drops a command line's flags (all of the --flag=value form).
func positional(args []string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}

// envValue is the value container c sees for name: env wins over envFrom.
func (o *objects) envValue(c *corev1.Container, name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name != name {
			continue
		}
		if e.ValueFrom != nil && e.ValueFrom.ConfigMapKeyRef != nil {
			if cm := o.configMapByName(e.ValueFrom.ConfigMapKeyRef.Name); cm != nil {
				v, ok := cm.Data[e.ValueFrom.ConfigMapKeyRef.Key]
				return v, ok
			}
			return "", false
		}
		return e.Value, true
	}
	val, found := "", false
	for _, ef := range c.EnvFrom {
		if ef.ConfigMapRef == nil {
			continue
		}
		if cm := o.configMapByName(ef.ConfigMapRef.Name); cm != nil {
			if v, ok := cm.Data[strings.TrimPrefix(name, ef.Prefix)]; ok && strings.HasPrefix(name, ef.Prefix) {
				val, found = v, true // a later source wins
			}
		}
	}
	return val, found
}

// checkCredentials: each service connects with its own role's credentials
// (--nats-creds in the Secret claimcheck-<role>-creds, role = the service),
// the streams Job with the admin's.
func checkCredentials(o *objects, p *problems) {
	for _, w := range o.podTemplates() {
		for _, c := range w.tpl.Spec.Containers {
			if _, _, ok := claimcheckImage(c.Image); !ok {
				continue
			}
			role := c.Name
			if w.kind == "Job" {
				role = "admin"
			}
			creds := argValue(c.Args, "--nats-creds")
			vol, mnt := mountOf(&w.tpl.Spec, &c, creds)
			if creds == "" || vol == nil || vol.Secret == nil || vol.Secret.SecretName != "claimcheck-"+role+"-creds" || !mnt.ReadOnly {
				p.addf("%s container %s: --nats-creds %q must be in the Secret claimcheck-%s-creds, mounted read-only", w, c.Name, creds, role)
			}
		}
	}
}

// checkRotator: one rotator, never two (not even while upgrading).
func checkRotator(o *objects, p *problems) {
	for _, d := range o.deployments {
		if d.Name != "rotator" {
			continue
		}
		if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != "Recreate" {
			p.addf("Deployment rotator: want replicas 1 and strategy Recreate (replicas %v, strategy %q)", deref(d.Spec.Replicas), d.Spec.Strategy.Type)
		}
		return
	}
	p.addf("no Deployment rotator")
}

// checkAutoscaling: the verifier scales on CPU (HPA), or with the KEDA
// component on CLAIMS's pending count through its durable consumer, never
// both; nothing scales the rotator.
func checkAutoscaling(o *objects, want expect, f *facts, p *problems) {
	scaled := map[string]int{}
	for _, h := range o.hpas {
		scaled[h.Spec.ScaleTargetRef.Name]++
		if h.Spec.ScaleTargetRef.Kind != "Deployment" {
			p.addf("HorizontalPodAutoscaler %s: scales a %s", h.Name, h.Spec.ScaleTargetRef.Kind)
		}
		if !slices.ContainsFunc(h.Spec.Metrics, func(m autoscalingv2.MetricSpec) bool {
			return m.Resource != nil && m.Resource.Name == corev1.ResourceCPU
		}) {
			p.addf("HorizontalPodAutoscaler %s: want a CPU metric", h.Name)
		}
	}
	for _, s := range o.scaledObjects {
		scaled[s.Spec.ScaleTargetRef.Name]++
		js := 0
		for _, t := range s.Spec.Triggers {
			if t.Type != "nats-jetstream" {
				continue
			}
			js++
			md := t.Metadata
			if md["stream"] != stream.Claims || md["consumer"] != f.consumer {
				p.addf("ScaledObject %s: stream %q consumer %q, want %s and the verifier's durable consumer %q", s.Name, md["stream"], md["consumer"], stream.Claims, f.consumer)
			}
			if !strings.HasPrefix(md["natsServerMonitoringEndpoint"], o.statefulSets[0].Spec.ServiceName+"."+namespace+".") ||
				!strings.HasSuffix(md["natsServerMonitoringEndpoint"], ":"+strconv.Itoa(int(natsPort(o, "monitor")))) {
				p.addf("ScaledObject %s: natsServerMonitoringEndpoint %q is not the headless Service's monitor port", s.Name, md["natsServerMonitoringEndpoint"])
			}
		}
		if js != 1 {
			p.addf("ScaledObject %s: want one nats-jetstream trigger", s.Name)
		}
	}
	for target, n := range scaled {
		if _, c := o.container(target); c == nil {
			p.addf("an autoscaler scales %s, which is no Deployment", target)
		}
		if n > 1 {
			p.addf("Deployment %s: %d autoscalers", target, n)
		}
	}
	if scaled["rotator"] > 0 {
		p.addf("Deployment rotator: autoscaled; there must be one")
	}
	if want.keda != (len(o.scaledObjects) == 1) || want.keda == (len(o.hpas) == 1) || scaled["verifier"] != 1 {
		p.addf("the verifier: want it scaled by %s alone", map[bool]string{true: "KEDA's ScaledObject", false: "the CPU HorizontalPodAutoscaler"}[want.keda])
	}
}

func natsPort(o *objects, name string) int32 {
	if len(o.statefulSets) == 0 || len(o.statefulSets[0].Spec.Template.Spec.Containers) == 0 {
		return 0
	}
	return namedPort(o.statefulSets[0].Spec.Template.Spec.Containers[0].Ports, name)
}

// checkNetworkPolicies: ingress is denied by default; NATS's client port
// is open to the pods labelled claimcheck.dev/nats-client (every claimcheck
// pod) and to named namespaces or CIDRs (the agent hosts), its route port
// to the NATS pods alone; no rule lets everyone in.
func checkNetworkPolicies(o *objects, p *problems) {
	checkDefaultDeny(o, p)
	natsLabels := labels.Set(o.statefulSets[0].Spec.Template.Labels)
	client, route := natsPort(o, "client"), natsPort(o, "cluster")
	for _, np := range o.networkPolicies {
		sel, err := metavSelector(&np.Spec.PodSelector)
		if err != nil {
			p.addf("NetworkPolicy %s: %w", np.Name, err)
			continue
		}
		for _, r := range np.Spec.Ingress {
			if len(r.From) == 0 {
				p.addf("NetworkPolicy %s: a rule with no from lets everyone in", np.Name)
			}
			if !sel.Matches(natsLabels) {
				continue
			}
			for _, peer := range r.From {
				if opens(r.Ports, route) && (peer.PodSelector == nil || peer.NamespaceSelector != nil || peer.IPBlock != nil ||
					!selectorMatches(peer, natsLabels)) {
					p.addf("NetworkPolicy %s: the route port %d is open to more than the NATS pods", np.Name, route)
				}
				if opens(r.Ports, client) && peer.PodSelector != nil && peer.NamespaceSelector == nil && peer.PodSelector.MatchLabels[natsClientLabel] != "true" {
					p.addf("NetworkPolicy %s: the client port is open to pods not labelled %s", np.Name, natsClientLabel)
				}
				if peer.NamespaceSelector != nil && len(peer.NamespaceSelector.MatchLabels)+len(peer.NamespaceSelector.MatchExpressions) == 0 {
					p.addf("NetworkPolicy %s: a namespaceSelector that selects every namespace", np.Name)
				}
			}
		}
	}
	for _, w := range o.podTemplates() {
		for _, c := range w.tpl.Spec.Containers {
			if _, _, ok := claimcheckImage(c.Image); ok && w.tpl.Labels[natsClientLabel] != "true" {
				p.addf("%s: a claimcheck pod without the label %s cannot reach NATS", w, natsClientLabel)
			}
		}
	}
}

// checkDefaultDeny: a policy selecting every pod denies ingress unless
// another allows it.
func checkDefaultDeny(o *objects, p *problems) {
	if !slices.ContainsFunc(o.networkPolicies, func(np networkingv1.NetworkPolicy) bool {
		return len(np.Spec.PodSelector.MatchLabels)+len(np.Spec.PodSelector.MatchExpressions) == 0 &&
			slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) && len(np.Spec.Ingress) == 0
	}) {
		p.addf("NetworkPolicy: want a default deny of ingress for the namespace")
	}
}

func opens(ports []networkingv1.NetworkPolicyPort, port int32) bool {
	return len(ports) == 0 || slices.ContainsFunc(ports, func(pp networkingv1.NetworkPolicyPort) bool {
		return pp.Port == nil || pp.Port.IntValue() == int(port)
	})
}

func selectorMatches(peer networkingv1.NetworkPolicyPeer, set labels.Set) bool {
	s, err := metavSelector(peer.PodSelector)
	return err == nil && !s.Empty() && s.Matches(set)
}

// checkMetrics: every service's pods say where Prometheus scrapes them, and
// the Prometheus component's PodMonitor selects every one of them on that
// port.
func checkMetrics(o *objects, want expect, p *problems) {
	for _, w := range o.podTemplates() {
		if w.kind != "Deployment" {
			continue
		}
		c := &w.tpl.Spec.Containers[0]
		a := w.tpl.Annotations
		if a["prometheus.io/scrape"] != "true" || a["prometheus.io/path"] != "/metrics" || a["prometheus.io/port"] != strconv.Itoa(int(namedPort(c.Ports, "http"))) {
			p.addf("%s: want prometheus.io/scrape, port (the http port) and path /metrics annotations", w)
		}
		for _, pm := range o.podMonitors {
			s, err := metavSelector(&pm.Spec.Selector)
			if err != nil || !s.Matches(labels.Set(w.tpl.Labels)) {
				p.addf("PodMonitor %s: does not select %s", pm.Name, w)
				continue
			}
			for _, e := range pm.Spec.PodMetricsEndpoints {
				if namedPort(c.Ports, e.Port) == 0 || e.Path != "/metrics" {
					p.addf("PodMonitor %s: endpoint %s%s is not %s's /metrics", pm.Name, e.Port, e.Path, w)
				}
			}
		}
	}
	if want.prometheus != (len(o.podMonitors) == 1) {
		p.addf("want %d PodMonitor, found %d", map[bool]int{true: 1}[want.prometheus], len(o.podMonitors))
	}
}

// checkSecretsDocumented: every Secret the pods need is one docs/deploy.md
// says how to make.
func checkSecretsDocumented(o *objects, f *facts, p *problems) {
	for _, w := range o.podTemplates() {
		var names []string
		for _, v := range w.tpl.Spec.Volumes {
			if v.Secret != nil {
				names = append(names, v.Secret.SecretName)
			}
			if v.Projected != nil {
				for _, s := range v.Projected.Sources {
					if s.Secret != nil {
						names = append(names, s.Secret.Name)
					}
				}
			}
		}
		for _, c := range w.tpl.Spec.Containers {
			for _, e := range c.Env {
				if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
					names = append(names, e.ValueFrom.SecretKeyRef.Name)
				}
			}
		}
		for _, n := range names {
			if !strings.Contains(f.deployDoc, n) {
				p.addf("%s: Secret %s is not in docs/deploy.md", w, n)
			}
		}
	}
}
