package deploy

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// namespace is where the manifests put everything; witnessNamespace is
// where the witness's (deploy/k8s/witness) put everything of theirs.
const (
	namespace        = "claimcheck"
	witnessNamespace = "claimcheck-witness"
)

// expect is what one overlay must be.
type expect struct {
	replicas   int  // NATS nodes, and every stream's replicas
	keda       bool // the verifier scales with KEDA's ScaledObject, not the CPU HPA
	prometheus bool // a PodMonitor scrapes the services
	witnesses  int  // rotator.witnesses entries
	// witness: the build is a witness's (deploy/k8s/witness), not
	// claimcheck's: checkWitness, not the rest.
	witness bool
}

// problems collects what a check finds.
type problems []error

func (p *problems) addf(format string, args ...any) { *p = append(*p, fmt.Errorf(format, args...)) }

func (p *problems) err() error { return errors.Join(*p...) }

// check runs every invariant on a build.
func check(o *objects, want expect, f *facts) error {
	if want.witness {
		return checkWitness(o, f)
	}
	var p problems
	checkNamespaces(o, namespace, &p)
	checkWorkloads(o, &p)
	checkServices(o, &p)
	checkImages(o, f, &p)
	checkNATS(o, want, f, &p)
	checkConfig(o, f, &p)
	checkRotatorWitnesses(o, want, &p)
	checkStreamsReplicas(o, want, &p)
	checkCredentials(o, &p)
	checkRotator(o, &p)
	checkAutoscaling(o, want, f, &p)
	checkNetworkPolicies(o, &p)
	checkMetrics(o, want, &p)
	checkSecretsDocumented(o, f, &p)
	return p.err()
}

func checkNamespaces(o *objects, ns string, p *problems) {
	for _, n := range o.names {
		if n.kind != "Namespace" && n.namespace != ns {
			p.addf("%s %s: namespace %q, want %q", n.kind, n.name, n.namespace, ns)
		}
	}
	if len(o.namespaces) != 1 || o.namespaces[0].Name != ns {
		p.addf("want the one Namespace %s", ns)
	}
}

// checkWorkloads: selectors select their own pods; every container has
// requests and limits, the restricted security settings, and (except a
// Job's and an init container's) liveness and readiness probes on ports it
// declares; every mount names a volume.
func checkWorkloads(o *objects, p *problems) {
	for _, d := range o.deployments {
		selects(p, "Deployment "+d.Name, d.Spec.Selector, d.Spec.Template.Labels)
	}
	for _, s := range o.statefulSets {
		selects(p, "StatefulSet "+s.Name, s.Spec.Selector, s.Spec.Template.Labels)
	}
	for _, w := range o.podTemplates() {
		spec := &w.tpl.Spec
		if spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken {
			p.addf("%s: automountServiceAccountToken must be false (no pod talks to the API server)", w)
		}
		volumes := map[string]bool{}
		for _, v := range spec.Volumes {
			volumes[v.Name] = true
		}
		for _, c := range w.claims {
			volumes[c.Name] = true
		}
		for i, c := range slices.Concat(spec.InitContainers, spec.Containers) {
			where := fmt.Sprintf("%s container %s", w, c.Name)
			checkResources(p, where, c.Resources)
			checkSecurity(p, where, spec.SecurityContext, c.SecurityContext)
			// An init container (not a sidecar) runs to completion before
			// the others start: Kubernetes refuses probes on one.
			initOnly := i < len(spec.InitContainers) && (c.RestartPolicy == nil || *c.RestartPolicy != corev1.ContainerRestartPolicyAlways)
			switch {
			case initOnly && (c.LivenessProbe != nil || c.ReadinessProbe != nil || c.StartupProbe != nil):
				p.addf("%s: an init container with probes (the API server refuses it)", where)
			case initOnly:
			case w.kind != "Job": // a Job's container serves nothing to probe
				checkProbe(p, where+" livenessProbe", c.LivenessProbe, c.Ports, "/healthz")
				checkProbe(p, where+" readinessProbe", c.ReadinessProbe, c.Ports, "/readyz", "/healthz")
			}
			for _, m := range c.VolumeMounts {
				if !volumes[m.Name] {
					p.addf("%s: mounts volume %q, which the pod does not have", where, m.Name)
				}
			}
		}
	}
}

func selects(p *problems, what string, sel *metav1.LabelSelector, podLabels map[string]string) {
	s, err := metav1.LabelSelectorAsSelector(sel)
	switch {
	case err != nil:
		p.addf("%s: selector: %w", what, err)
	case sel == nil || s.Empty():
		p.addf("%s: empty selector", what)
	case !s.Matches(labels.Set(podLabels)):
		p.addf("%s: selector %s does not match its pod template's labels %v", what, s, podLabels)
	}
}

func checkResources(p *problems, where string, r corev1.ResourceRequirements) {
	for _, name := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		req, okReq := r.Requests[name]
		lim, okLim := r.Limits[name]
		if !okReq || !okLim {
			p.addf("%s: needs %s requests and limits", where, name)
			continue
		}
		if req.Cmp(lim) > 0 {
			p.addf("%s: %s request %s above its limit %s", where, name, req.String(), lim.String())
		}
	}
}

func checkSecurity(p *problems, where string, pod *corev1.PodSecurityContext, c *corev1.SecurityContext) {
	if pod == nil {
		pod = &corev1.PodSecurityContext{}
	}
	if c == nil {
		p.addf("%s: no securityContext", where)
		return
	}
	nonRoot, user, seccomp := pod.RunAsNonRoot, pod.RunAsUser, pod.SeccompProfile
	if c.RunAsNonRoot != nil {
		nonRoot = c.RunAsNonRoot
	}
	if c.RunAsUser != nil {
		user = c.RunAsUser
	}
	if c.SeccompProfile != nil {
		seccomp = c.SeccompProfile
	}
	if nonRoot == nil || !*nonRoot {
		p.addf("%s: runAsNonRoot must be true", where)
	}
	if user == nil || *user == 0 {
		p.addf("%s: needs a numeric non-zero runAsUser", where)
	}
	if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		p.addf("%s: seccompProfile must be RuntimeDefault", where)
	}
	if c.AllowPrivilegeEscalation == nil || *c.AllowPrivilegeEscalation {
		p.addf("%s: allowPrivilegeEscalation must be false", where)
	}
	if c.ReadOnlyRootFilesystem == nil || !*c.ReadOnlyRootFilesystem {
		p.addf("%s: readOnlyRootFilesystem must be true", where)
	}
	if c.Privileged != nil && *c.Privileged {
		p.addf("%s: privileged", where)
	}
	if c.Capabilities == nil || !slices.Contains(c.Capabilities.Drop, "ALL") || len(c.Capabilities.Add) > 0 {
		p.addf("%s: capabilities must drop ALL and add none", where)
	}
}

func checkProbe(p *problems, where string, pr *corev1.Probe, ports []corev1.ContainerPort, paths ...string) {
	switch {
	case pr == nil:
		p.addf("%s: missing", where)
	case pr.HTTPGet == nil:
		p.addf("%s: want an httpGet probe", where)
	case !slices.ContainsFunc(paths, func(s string) bool { return strings.HasPrefix(pr.HTTPGet.Path, s) }):
		p.addf("%s: path %s, want %s", where, pr.HTTPGet.Path, strings.Join(paths, " or "))
	case containerPort(ports, pr.HTTPGet.Port) == 0:
		p.addf("%s: port %s is not a port of the container", where, pr.HTTPGet.Port.String())
	}
}

// containerPort resolves a port by name or number (0: not declared).
func containerPort(ports []corev1.ContainerPort, port intstr.IntOrString) int32 {
	for _, cp := range ports {
		if port.Type == intstr.String && cp.Name == port.StrVal || port.Type == intstr.Int && cp.ContainerPort == port.IntVal {
			return cp.ContainerPort
		}
	}
	return 0
}

// checkServices: every Service selects some workload's pods, on ports they
// declare.
func checkServices(o *objects, p *problems) {
	for _, s := range o.services {
		if len(s.Spec.Selector) == 0 {
			p.addf("Service %s: no selector", s.Name)
			continue
		}
		var selected []podTemplate
		for _, w := range o.podTemplates() {
			if w.kind != "Job" && labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(w.tpl.Labels)) {
				selected = append(selected, w)
			}
		}
		if len(selected) == 0 {
			p.addf("Service %s: selector %v selects no pod template", s.Name, s.Spec.Selector)
			continue
		}
		for _, sp := range s.Spec.Ports {
			for _, w := range selected {
				if !slices.ContainsFunc(w.tpl.Spec.Containers, func(c corev1.Container) bool { return containerPort(c.Ports, sp.TargetPort) != 0 }) {
					p.addf("Service %s port %s: target %s is not a port of %s", s.Name, sp.Name, sp.TargetPort.String(), w)
				}
			}
		}
	}
}

// claimcheckImage reports whether image is one of claimcheck's
// ([REGISTRY/]claimcheck/<name>[:<tag>]) and returns its name and tag.
func claimcheckImage(image string) (name, tag string, ok bool) {
	ref := image
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref, tag = ref[:i], ref[i+1:]
	}
	if !strings.Contains(ref, "/") || path.Base(path.Dir(ref)) != "claimcheck" {
		return "", "", false
	}
	return path.Base(ref), tag, true
}

// checkImages: claimcheck's images carry one pinned tag; NATS is the
// version claimcheck is built and tested with.
func checkImages(o *objects, f *facts, p *problems) {
	tags := map[string]bool{}
	for _, w := range o.podTemplates() {
		for _, c := range slices.Concat(w.tpl.Spec.InitContainers, w.tpl.Spec.Containers) {
			if strings.Contains(c.Image, "@") {
				continue // pinned by digest
			}
			if name, tag, ok := claimcheckImage(c.Image); ok {
				if tag == "" || tag == "latest" {
					p.addf("%s container %s: image %s needs a pinned tag (not latest, not empty)", w, c.Name, c.Image)
				}
				if c.Name != name && name != "claimcheck" {
					p.addf("%s container %s runs image %s", w, c.Name, c.Image)
				}
				tags[tag] = true
				continue
			}
			if want := "nats:" + f.natsVersion + "-alpine"; c.Image != want {
				p.addf("%s container %s: image %s, want %s (pkg/go.mod's nats-server) or a claimcheck image", w, c.Name, c.Image, want)
			}
		}
	}
	if len(tags) > 1 {
		p.addf("claimcheck's images carry different tags %v: they are released together", tags)
	}
}
